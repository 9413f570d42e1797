// flitwave reference router: an input-queued virtual-channel router, cycle for cycle the
// model's router (router/src) under the `realistic` pipeline preset, for unicast packets.
//
// Ports 0 .. NET-1 are network ports (links to neighbours), NET .. P-1 the node's NIC
// channels: injection on the input side, ejection on the output side (the model's port
// model). Every input port has VCS virtual channels; every ejection channel EJ_VCS
// (`--ejection-vcs`: the NIC's reassembly buffers).
//
// Pipeline (`realistic`: rc_delay 1, va_delay 1, link_latency 2, credit_delay 1,
// inject_latency 1), one register between each stage and the next:
//
//   cycle t-1  flit on in_*                       (link, or the NIC writing it)
//   cycle t    readable in its VC FIFO; a head at the front of an idle VC is routed (RC)
//   cycle t+1  VC allocation (VA): an output VC, or an ejection VC of some channel
//   cycle t+2  switch allocation (SA) and crossbar: the flit is read out of its FIFO
//   cycle t+3  on out_* (switch and link traversal), and its slot's credit on cr_out_*
//   cycle t+4  readable in the next router's FIFO; upstream the credit is usable
//
// so a head takes 4 cycles a hop and a packet alone in the network 4H + 3 + (L-1) cycles
// from its creation to its tail's ejection (docs/rtl.md).
//
// Within a cycle the stages run in the model's order (router/src/stages.rs): stage 1 is
// ejection-VC allocation then ejection (one flit a channel), stage 2 network VC allocation
// then switch allocation with crossbar traversal. An input port is read at most once a
// cycle (links one flit wide): ejection's reads count against stage 2's. A grant made in
// cycle t is used from t + 1, and an output VC or ejection VC let go in t can be allocated
// again from t + 1 (within one allocation an arbiter that grants several VCs moves its
// pointer after each grant, as the model's does).
//
// Arbiters are round-robin over the router's input VCs (bit l = port * VCS + vc): the
// first requester at or after the pointer wins and the pointer moves just past the winner
// (router/src/arbiter.rs). Each output port has one for VC allocation and one for switch
// allocation; an output offers its free VCs round-robin from the one after the last it
// granted (va_policy round-robin); network outputs take turns at picking first in switch
// allocation, output (cycle mod NET) first.
//
// Flits (see docs/rtl.md for the bit layout): head and tail flags, packet id, sequence
// number and the header of router/src/flit.rs (kind, src, dest, key, len, span) at its
// widths. The header is meaningful in head flits; the router reads dest and len, and routes
// every packet as unicast (replicating broadcasts, kind 1, is the model's only).
module router #(
    parameter int TOPOLOGY = 0,  // 0: mesh, 1: hypercube
    parameter int DIMS = 2,
    // Mesh: the size of each dimension, 16 bits each, dimension 0 in the low bits.
    parameter logic [16*DIMS-1:0] SIZES = {16'd4, 16'd4},
    parameter int NIC_CHANNELS = 1,
    parameter int VCS = 2,
    parameter int EJ_VCS = 2,
    parameter int DEPTH = 4,  // network input VC FIFO, flits (the upstream credits)
    parameter int INJ_DEPTH = 4,  // injection VC FIFO, flits
    parameter int SWITCHING = 0,  // 0: wormhole, 1: virtual cut-through, 2: store-and-forward
    // Flit fields (router/src/flit.rs): packet id, sequence number, header.
    parameter int PKT_W = 32,
    parameter int SEQ_W = 16,
    parameter int NODE_W = 24,
    parameter int KEY_W = 24,
    parameter int LEN_W = 16,
    parameter int SPAN_W = 32,
    localparam int NET = TOPOLOGY == 1 ? DIMS : 2 * DIMS,
    localparam int P = NET + NIC_CHANNELS,
    localparam int MAXV = VCS > EJ_VCS ? VCS : EJ_VCS,
    localparam int VC_W = MAXV > 1 ? $clog2(MAXV) : 1,
    localparam int HDR_W = 2 + 2 * NODE_W + KEY_W + LEN_W + SPAN_W,
    localparam int FLIT_W = 2 + PKT_W + SEQ_W + HDR_W
) (
    input logic clk,
    input logic rst,
    input logic [NODE_W-1:0] node_id,
    // Input ports: a flit written into VC in_vc of port p (readable from the next cycle).
    input logic [P-1:0] in_valid,
    input logic [P-1:0][VC_W-1:0] in_vc,
    input logic [P-1:0][FLIT_W-1:0] in_flit,
    // Credits back upstream: a slot of VC cr_out_vc of input port p was freed last cycle.
    output logic [P-1:0] cr_out_valid,
    output logic [P-1:0][VC_W-1:0] cr_out_vc,
    // Output ports: a flit that won switch allocation last cycle, on output VC out_vc
    // (ejection channels: its ejection VC).
    output logic [P-1:0] out_valid,
    output logic [P-1:0][VC_W-1:0] out_vc,
    output logic [P-1:0][FLIT_W-1:0] out_flit,
    // Credits from downstream, one a cycle per network output port: usable next cycle.
    input logic [NET-1:0] cr_in_valid,
    input logic [NET-1:0][VC_W-1:0] cr_in_vc
);
  localparam int NPV = P * VCS;  // input VCs
  localparam int L_W = NPV > 1 ? $clog2(NPV) : 1;
  localparam int PORT_W = P > 1 ? $clog2(P) : 1;
  localparam int NV_W = VCS > 1 ? $clog2(VCS) : 1;
  localparam int EV_W = EJ_VCS > 1 ? $clog2(EJ_VCS) : 1;
  localparam int CH_W = NIC_CHANNELS > 1 ? $clog2(NIC_CHANNELS) : 1;
  localparam int MAXD = DEPTH > INJ_DEPTH ? DEPTH : INJ_DEPTH;
  localparam int CNT_W = $clog2(MAXD + 1);
  localparam int CR_W = $clog2(DEPTH + 1);
  // Flit bit layout, from bit 0: head, tail, packet, seq, then the header: kind, src, dest,
  // key, len, span.
  localparam int F_HEAD = 0;
  localparam int F_TAIL = 1;
  localparam int F_DEST = 2 + PKT_W + SEQ_W + 2 + NODE_W;
  localparam int F_LEN = F_DEST + NODE_W + KEY_W;

  // ---- Input units: per input VC its FIFO and its packet's state ----
  logic [FLIT_W-1:0] front[NPV];
  logic [CNT_W-1:0] count[NPV];
  logic [NPV-1:0] pop;

  for (genvar l = 0; l < NPV; l++) begin : g_vc
    localparam int PORT = l / VCS;
    localparam int D = PORT < NET ? DEPTH : INJ_DEPTH;
    logic [$clog2(D+1)-1:0] n;
    vc_fifo #(
        .DEPTH(D),
        .WIDTH(FLIT_W)
    ) fifo (
        .clk,
        .rst,
        .push(in_valid[PORT] && 32'(in_vc[PORT]) == l % VCS),
        .din(in_flit[PORT]),
        .pop(pop[l]),
        .front(front[l]),
        .count(n)
    );
    assign count[l] = CNT_W'(n);
  end

  // The front packet: routed (RC done), granted (holds its output VC or ejection VC), to
  // ejection or to network port `out`, its output VC or ejection VC `ovc` (of channel
  // `ech`), its length.
  logic [NPV-1:0] routed_q, routed_d, granted_q, granted_d, local_q, local_d;
  logic [PORT_W-1:0] out_q[NPV], out_d[NPV];
  logic [VC_W-1:0] ovc_q[NPV], ovc_d[NPV];
  logic [CH_W-1:0] ech_q[NPV], ech_d[NPV];
  logic [LEN_W-1:0] plen_q[NPV], plen_d[NPV];

  // ---- Route computation: one per input VC, on its front flit ----
  logic [NPV-1:0] rc_local;
  logic [PORT_W-1:0] rc_port[NPV];
  for (genvar l = 0; l < NPV; l++) begin : g_rc
    route_compute #(
        .TOPOLOGY(TOPOLOGY),
        .DIMS(DIMS),
        .SIZES(SIZES),
        .NODE_W(NODE_W),
        .PORT_W(PORT_W)
    ) rc (
        .node_id,
        .dest(front[l][F_DEST+:NODE_W]),
        .local_out(rc_local[l]),
        .port(rc_port[l])
    );
  end

  // ---- Output units ----
  // Network output VCs: credits (free slots downstream) and whether an input VC holds it.
  logic [CR_W-1:0] credits_q[NET][VCS], credits_d[NET][VCS];
  logic [VCS-1:0] held_q[NET], held_d[NET];
  // Ejection VCs held, per channel.
  logic [EJ_VCS-1:0] ej_held_q[NIC_CHANNELS], ej_held_d[NIC_CHANNELS];
  // Per output port: VC-allocation and switch-allocation arbiter pointers, and the VC its
  // round-robin offer of free VCs starts at.
  logic [L_W-1:0] va_ptr_q[P], va_ptr_d[P], sa_ptr_q[P], sa_ptr_d[P];
  logic [VC_W-1:0] vc_next_q[P], vc_next_d[P];
  // The network output that picks first in switch allocation this cycle: cycle mod NET.
  logic [PORT_W-1:0] sa_first_q;

  // Registered outputs.
  logic [P-1:0] out_valid_d, cr_out_valid_d;
  logic [VC_W-1:0] out_vc_d[P], cr_out_vc_d[P];
  logic [FLIT_W-1:0] out_flit_d[P];

  // The first requester at or after `ptr` (round-robin; requests not empty).
  function automatic logic [L_W-1:0] rr_pick(input logic [NPV-1:0] req, input logic [L_W-1:0] ptr);
    logic found;
    logic [L_W-1:0] who;
    found = 1'b0;
    who = ptr;
    for (int k = 0; k < NPV; k++) begin
      int idx;
      idx = int'(ptr) + k;
      if (idx >= NPV) idx -= NPV;
      if (!found && req[idx]) begin
        found = 1'b1;
        who = L_W'(idx);
      end
    end
    return who;
  endfunction

  // The arbiter pointer after `who` won: just past it.
  function automatic logic [L_W-1:0] past(input logic [L_W-1:0] who);
    return (32'(who) + 1 >= NPV) ? '0 : who + 1'b1;
  endfunction

  // The VC after `vc` of `n`, wrapping.
  function automatic logic [VC_W-1:0] next_vc(input logic [VC_W-1:0] vc, input int n);
    return (32'(vc) + 1 >= n) ? '0 : vc + 1'b1;
  endfunction

  // The input port of input VC `l`.
  function automatic int port_of(input logic [L_W-1:0] l);
    return int'(l) / VCS;
  endfunction

  always_comb begin
    logic [P-1:0] port_read;  // input ports read through the crossbar this cycle
    logic [NPV-1:0] req;
    logic [L_W-1:0] w;
    logic [VC_W-1:0] vc;
    logic [CR_W-1:0] need;
    logic found;
    int o, v, e;

    w = '0;
    vc = '0;
    need = '0;
    found = 1'b0;
    o = 0;
    v = 0;
    e = 0;
    routed_d = routed_q;
    granted_d = granted_q;
    local_d = local_q;
    out_d = out_q;
    ovc_d = ovc_q;
    ech_d = ech_q;
    plen_d = plen_q;
    held_d = held_q;
    ej_held_d = ej_held_q;
    va_ptr_d = va_ptr_q;
    sa_ptr_d = sa_ptr_q;
    vc_next_d = vc_next_q;
    pop = '0;
    port_read = '0;
    out_valid_d = '0;
    cr_out_valid_d = '0;
    for (int p = 0; p < P; p++) begin
      out_vc_d[p] = '0;
      out_flit_d[p] = '0;
      cr_out_vc_d[p] = '0;
    end

    // ---- RC (route_compute.rs): a head at the front of an idle VC is routed; it requests
    // VC allocation from the next cycle (rc_delay 1).
    for (int l = 0; l < NPV; l++) begin
      if (!routed_q[l] && count[l] != 0) begin
        routed_d[l] = 1'b1;
        local_d[l] = rc_local[l];
        out_d[l] = rc_port[l];
        plen_d[l] = front[l][F_LEN+:LEN_W];
      end
    end

    // ---- Stage 1: ejection-VC allocation (vc_allocator.rs, allocate_ejection). Channel
    // by channel, each of its free ejection VCs in the order the channel offers them goes
    // to its arbiter's winner among every packet routed to ejection (any channel will do).
    req = '0;
    for (int l = 0; l < NPV; l++) req[l] = routed_q[l] && !granted_q[l] && local_q[l];
    for (int ch = 0; ch < NIC_CHANNELS; ch++) begin
      for (int g = 0; g < EJ_VCS; g++) begin
        found = 1'b0;
        vc = '0;
        for (int k = 0; k < EJ_VCS; k++) begin
          e = int'(vc_next_d[NET+ch]) + k;
          if (e >= EJ_VCS) e -= EJ_VCS;
          if (!found && !ej_held_d[ch][e]) begin
            found = 1'b1;
            vc = VC_W'(e);
          end
        end
        if (found && req != 0) begin
          w = rr_pick(req, va_ptr_d[NET+ch]);
          va_ptr_d[NET+ch] = past(w);
          req[w] = 1'b0;
          ej_held_d[ch][EV_W'(vc)] = 1'b1;
          vc_next_d[NET+ch] = next_vc(vc, EJ_VCS);
          granted_d[w] = 1'b1;
          ech_d[w] = CH_W'(ch);
          ovc_d[w] = vc;
        end
      end
    end

    // ---- Stage 1: ejection (switch_allocator.rs, eject). Each channel takes one flit a
    // cycle from a packet holding one of its VCs since an earlier cycle, by its arbiter,
    // among those whose input port has not been read yet; the tail lets go of the VC.
    for (int ch = 0; ch < NIC_CHANNELS; ch++) begin
      req = '0;
      for (int l = 0; l < NPV; l++)
        req[l] = granted_q[l] && local_q[l] && count[l] != 0 && 32'(ech_q[l]) == ch && !port_read[l/VCS];
      if (req != 0) begin
        w = rr_pick(req, sa_ptr_q[NET+ch]);
        sa_ptr_d[NET+ch] = past(w);
        port_read[port_of(w)] = 1'b1;
        pop[w] = 1'b1;
        out_valid_d[NET+ch] = 1'b1;
        out_vc_d[NET+ch] = ovc_q[w];
        out_flit_d[NET+ch] = front[w];
        if (front[w][F_TAIL]) begin
          ej_held_d[ch][EV_W'(ovc_q[w])] = 1'b0;
          granted_d[w] = 1'b0;
          routed_d[w] = 1'b0;
        end
      end
    end

    // ---- Stage 2: network VC allocation (vc_allocator.rs, allocate_network_vcs). Each
    // output, in port order, offers its free VCs from the one after the last it granted;
    // each goes to the output's VA arbiter's winner among the packets routed there.
    for (int op = 0; op < NET; op++) begin
      req = '0;
      for (int l = 0; l < NPV; l++) req[l] = routed_q[l] && !granted_q[l] && !local_q[l] && 32'(out_q[l]) == op;
      for (int k = 0; k < VCS; k++) begin
        v = int'(vc_next_q[op]) + k;
        if (v >= VCS) v -= VCS;
        if (!held_q[op][v] && req != 0) begin
          w = rr_pick(req, va_ptr_d[op]);
          va_ptr_d[op] = past(w);
          req[w] = 1'b0;
          held_d[op][v] = 1'b1;
          vc_next_d[op] = next_vc(VC_W'(v), VCS);
          granted_d[w] = 1'b1;
          ovc_d[w] = VC_W'(v);
        end
      end
    end

    // ---- Stage 2: switch allocation and crossbar (switch_allocator.rs, allocate_switch;
    // crossbar.rs). A packet holding its output VC since an earlier cycle requests its
    // output when its front flit may cross and the output VC has the credits for it (one
    // flit; a cut-through or store-and-forward head, the whole packet). Outputs pick in
    // turn from output (cycle mod NET), each its arbiter's winner among requesters whose
    // input port has not been read yet. The winner's flit leaves (a credit spent), its slot
    // is freed (a credit upstream), and a tail lets go of the output VC.
    for (int k = 0; k < NET; k++) begin
      o = int'(sa_first_q) + k;
      if (o >= NET) o -= NET;
      req = '0;
      for (int l = 0; l < NPV; l++) begin
        need = (SWITCHING != 0 && front[l][F_HEAD]) ? CR_W'(plen_q[l]) : CR_W'(1);
        req[l] = granted_q[l] && !local_q[l] && 32'(out_q[l]) == o && count[l] != 0 && !port_read[l/VCS]
            && credits_q[o][NV_W'(ovc_q[l])] >= need
            // Store-and-forward: a head at a network input waits for its whole packet.
            && !(SWITCHING == 2 && l < NET * VCS && front[l][F_HEAD] && 32'(count[l]) < 32'(plen_q[l]));
      end
      if (req != 0) begin
        w = rr_pick(req, sa_ptr_q[o]);
        sa_ptr_d[o] = past(w);
        port_read[port_of(w)] = 1'b1;
        pop[w] = 1'b1;
        out_valid_d[o] = 1'b1;
        out_vc_d[o] = ovc_q[w];
        out_flit_d[o] = front[w];
        if (front[w][F_TAIL]) begin
          held_d[o][NV_W'(ovc_q[w])] = 1'b0;
          granted_d[w] = 1'b0;
          routed_d[w] = 1'b0;
        end
      end
    end

    // ---- Credits back upstream: one slot freed per input port read.
    for (int l = 0; l < NPV; l++) begin
      if (pop[l]) begin
        cr_out_valid_d[l/VCS] = 1'b1;
        cr_out_vc_d[l/VCS] = VC_W'(l % VCS);
      end
    end
  end

  // Output VC credits: one spent per flit sent, one back per credit from downstream.
  always_comb begin
    for (int op = 0; op < NET; op++) begin
      for (int v = 0; v < VCS; v++) begin
        credits_d[op][v] = credits_q[op][v]
            - CR_W'(out_valid_d[op] && 32'(out_vc_d[op]) == v)
            + CR_W'(cr_in_valid[op] && 32'(cr_in_vc[op]) == v);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      routed_q <= '0;
      granted_q <= '0;
      local_q <= '0;
      for (int l = 0; l < NPV; l++) begin
        out_q[l] <= '0;
        ovc_q[l] <= '0;
        ech_q[l] <= '0;
        plen_q[l] <= '0;
      end
      for (int op = 0; op < NET; op++) begin
        held_q[op] <= '0;
        for (int v = 0; v < VCS; v++) credits_q[op][v] <= CR_W'(DEPTH);
      end
      for (int ch = 0; ch < NIC_CHANNELS; ch++) ej_held_q[ch] <= '0;
      for (int p = 0; p < P; p++) begin
        va_ptr_q[p] <= '0;
        sa_ptr_q[p] <= '0;
        vc_next_q[p] <= '0;
        out_vc[p] <= '0;
        out_flit[p] <= '0;
        cr_out_vc[p] <= '0;
      end
      sa_first_q <= '0;
      out_valid <= '0;
      cr_out_valid <= '0;
    end else begin
      routed_q <= routed_d;
      granted_q <= granted_d;
      local_q <= local_d;
      out_q <= out_d;
      ovc_q <= ovc_d;
      ech_q <= ech_d;
      plen_q <= plen_d;
      held_q <= held_d;
      credits_q <= credits_d;
      ej_held_q <= ej_held_d;
      va_ptr_q <= va_ptr_d;
      sa_ptr_q <= sa_ptr_d;
      vc_next_q <= vc_next_d;
      sa_first_q <= (32'(sa_first_q) + 1 >= NET) ? '0 : sa_first_q + 1'b1;
      out_valid <= out_valid_d;
      cr_out_valid <= cr_out_valid_d;
      for (int p = 0; p < P; p++) begin
        out_vc[p] <= out_vc_d[p];
        out_flit[p] <= out_flit_d[p];
        cr_out_vc[p] <= cr_out_vc_d[p];
      end
    end
  end
endmodule
