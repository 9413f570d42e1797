// A worked example for adapters (docs/rtl-adapter.md): a router with its own port map, put
// in the fabric's co-simulation through rtl/examples/renamed_router.toml.
//
// Its port map differs from the reference router's (rtl/router.sv, docs/rtl.md) in every way
// an adapter can bridge: ports named with _i/_o suffixes, an active-low reset (rst_ni), its
// own parameter names, and its own flit layout: from bit 0 the header fields first (kind,
// src, dest, key, len, span), then packet id, sequence number, head and tail. Port vectors
// are packed per port, [P-1:0][W-1:0], like the reference's.
//
// Inside it is the reference router: it converts its flits to the reference layout, inverts
// its reset and instantiates `router`, so a co-simulation through the adapter must match the
// model exactly, as the reference does.
module renamed_router #(
    parameter int TOPO = 0,  // 0: mesh, 1: hypercube
    parameter int N_DIMS = 2,
    parameter logic [16*N_DIMS-1:0] DIM_SIZES = {16'd4, 16'd4},
    parameter int NUM_NIC = 1,
    parameter int NUM_VCS = 2,
    parameter int NUM_EJ_VCS = 2,
    parameter int BUF_DEPTH = 4,
    parameter int INJ_BUF_DEPTH = 4,
    parameter int SWITCH_MODE = 0,  // 0: wormhole, 1: virtual cut-through, 2: store-and-forward
    parameter int PACKET_BITS = 32,
    parameter int SEQ_BITS = 16,
    parameter int ID_BITS = 24,
    parameter int KEY_BITS = 24,
    parameter int LEN_BITS = 16,
    parameter int SPAN_BITS = 32,
    localparam int N_NET = TOPO == 1 ? N_DIMS : 2 * N_DIMS,
    localparam int N_PORTS = N_NET + NUM_NIC,
    localparam int MAX_VCS = NUM_VCS > NUM_EJ_VCS ? NUM_VCS : NUM_EJ_VCS,
    localparam int VC_BITS = MAX_VCS > 1 ? $clog2(MAX_VCS) : 1,
    localparam int FLIT_BITS = 2 + PACKET_BITS + SEQ_BITS + 2 + 2 * ID_BITS + KEY_BITS + LEN_BITS + SPAN_BITS
) (
    input logic clk_i,
    input logic rst_ni,
    input logic [ID_BITS-1:0] my_id_i,
    input logic [N_PORTS-1:0] flit_valid_i,
    input logic [N_PORTS-1:0][VC_BITS-1:0] flit_vc_i,
    input logic [N_PORTS-1:0][FLIT_BITS-1:0] flit_i,
    output logic [N_PORTS-1:0] credit_valid_o,
    output logic [N_PORTS-1:0][VC_BITS-1:0] credit_vc_o,
    output logic [N_PORTS-1:0] flit_valid_o,
    output logic [N_PORTS-1:0][VC_BITS-1:0] flit_vc_o,
    output logic [N_PORTS-1:0][FLIT_BITS-1:0] flit_o,
    input logic [N_NET-1:0] credit_valid_i,
    input logic [N_NET-1:0][VC_BITS-1:0] credit_vc_i
);
  // This router's flit layout, from bit 0 (O_*), and the reference's (R_*).
  localparam int O_KIND = 0;
  localparam int O_SRC = O_KIND + 2;
  localparam int O_DEST = O_SRC + ID_BITS;
  localparam int O_KEY = O_DEST + ID_BITS;
  localparam int O_LEN = O_KEY + KEY_BITS;
  localparam int O_SPAN = O_LEN + LEN_BITS;
  localparam int O_PACKET = O_SPAN + SPAN_BITS;
  localparam int O_SEQ = O_PACKET + PACKET_BITS;
  localparam int O_HEAD = O_SEQ + SEQ_BITS;
  localparam int O_TAIL = O_HEAD + 1;

  localparam int R_HEAD = 0;
  localparam int R_TAIL = 1;
  localparam int R_PACKET = 2;
  localparam int R_SEQ = R_PACKET + PACKET_BITS;
  localparam int R_KIND = R_SEQ + SEQ_BITS;
  localparam int R_SRC = R_KIND + 2;
  localparam int R_DEST = R_SRC + ID_BITS;
  localparam int R_KEY = R_DEST + ID_BITS;
  localparam int R_LEN = R_KEY + KEY_BITS;
  localparam int R_SPAN = R_LEN + LEN_BITS;

  logic [N_PORTS-1:0][FLIT_BITS-1:0] ref_in, ref_out;

  for (genvar p = 0; p < N_PORTS; p++) begin : g_layout
    // Into the reference layout.
    assign ref_in[p][R_HEAD] = flit_i[p][O_HEAD];
    assign ref_in[p][R_TAIL] = flit_i[p][O_TAIL];
    assign ref_in[p][R_PACKET+:PACKET_BITS] = flit_i[p][O_PACKET+:PACKET_BITS];
    assign ref_in[p][R_SEQ+:SEQ_BITS] = flit_i[p][O_SEQ+:SEQ_BITS];
    assign ref_in[p][R_KIND+:2] = flit_i[p][O_KIND+:2];
    assign ref_in[p][R_SRC+:ID_BITS] = flit_i[p][O_SRC+:ID_BITS];
    assign ref_in[p][R_DEST+:ID_BITS] = flit_i[p][O_DEST+:ID_BITS];
    assign ref_in[p][R_KEY+:KEY_BITS] = flit_i[p][O_KEY+:KEY_BITS];
    assign ref_in[p][R_LEN+:LEN_BITS] = flit_i[p][O_LEN+:LEN_BITS];
    assign ref_in[p][R_SPAN+:SPAN_BITS] = flit_i[p][O_SPAN+:SPAN_BITS];
    // And back out of it.
    assign flit_o[p][O_HEAD] = ref_out[p][R_HEAD];
    assign flit_o[p][O_TAIL] = ref_out[p][R_TAIL];
    assign flit_o[p][O_PACKET+:PACKET_BITS] = ref_out[p][R_PACKET+:PACKET_BITS];
    assign flit_o[p][O_SEQ+:SEQ_BITS] = ref_out[p][R_SEQ+:SEQ_BITS];
    assign flit_o[p][O_KIND+:2] = ref_out[p][R_KIND+:2];
    assign flit_o[p][O_SRC+:ID_BITS] = ref_out[p][R_SRC+:ID_BITS];
    assign flit_o[p][O_DEST+:ID_BITS] = ref_out[p][R_DEST+:ID_BITS];
    assign flit_o[p][O_KEY+:KEY_BITS] = ref_out[p][R_KEY+:KEY_BITS];
    assign flit_o[p][O_LEN+:LEN_BITS] = ref_out[p][R_LEN+:LEN_BITS];
    assign flit_o[p][O_SPAN+:SPAN_BITS] = ref_out[p][R_SPAN+:SPAN_BITS];
  end

  router #(
      .TOPOLOGY(TOPO),
      .DIMS(N_DIMS),
      .SIZES(DIM_SIZES),
      .NIC_CHANNELS(NUM_NIC),
      .VCS(NUM_VCS),
      .EJ_VCS(NUM_EJ_VCS),
      .DEPTH(BUF_DEPTH),
      .INJ_DEPTH(INJ_BUF_DEPTH),
      .SWITCHING(SWITCH_MODE),
      .PKT_W(PACKET_BITS),
      .SEQ_W(SEQ_BITS),
      .NODE_W(ID_BITS),
      .KEY_W(KEY_BITS),
      .LEN_W(LEN_BITS),
      .SPAN_W(SPAN_BITS)
  ) u_ref (
      .clk(clk_i),
      .rst(!rst_ni),
      .node_id(my_id_i),
      .in_valid(flit_valid_i),
      .in_vc(flit_vc_i),
      .in_flit(ref_in),
      .cr_out_valid(credit_valid_o),
      .cr_out_vc(credit_vc_o),
      .out_valid(flit_valid_o),
      .out_vc(flit_vc_o),
      .out_flit(ref_out),
      .cr_in_valid(credit_valid_i),
      .cr_in_vc(credit_vc_i)
  );
endmodule
