// Route computation (the model's route_compute.rs, with fabric/src/topology.rs's unicast
// routing functions): the output port a head flit takes from router `node_id` towards `dest`.
//
//  - mesh (TOPOLOGY 0): dimension order, lowest dimension first. Node ids are mixed-radix
//    coordinates, dimension 0 fastest (id = c0 + n0 * (c1 + n1 * ...)); port 2i leads one
//    step down in dimension i, port 2i + 1 one step up.
//  - hypercube (TOPOLOGY 1): e-cube, the lowest dimension in which the ids differ; port i
//    crosses dimension i.
//
// At the destination the packet is ejected (`local`); which ejection channel it takes is
// decided by ejection-VC allocation, not here. Purely combinational: the router registers
// the decision in the cycle it computes it (RC takes one cycle, the `realistic` rc_delay).
module route_compute #(
    parameter int TOPOLOGY = 0,
    parameter int DIMS = 2,
    // Mesh: the size of each dimension, 16 bits each, dimension 0 in the low bits.
    parameter logic [16*DIMS-1:0] SIZES = {16'd4, 16'd4},
    parameter int NODE_W = 24,
    parameter int PORT_W = 2
) (
    input  logic [NODE_W-1:0] node_id,
    input  logic [NODE_W-1:0] dest,
    output logic              local_out,
    output logic [PORT_W-1:0] port
);
  always_comb begin
    int unsigned stride, here, there;
    logic found;
    local_out = node_id == dest;
    port = '0;
    found = 1'b0;
    stride = 1;
    for (int i = 0; i < DIMS; i++) begin
      if (TOPOLOGY == 1) begin
        // e-cube: the lowest differing bit.
        if (!found && node_id[i] != dest[i]) begin
          found = 1'b1;
          port = PORT_W'(i);
        end
      end else begin
        here = (32'(node_id) / stride) % 32'(SIZES[16*i+:16]);
        there = (32'(dest) / stride) % 32'(SIZES[16*i+:16]);
        if (!found && here != there) begin
          found = 1'b1;
          port = PORT_W'(2 * i + (there > here ? 1 : 0));
        end
        stride = stride * 32'(SIZES[16*i+:16]);
      end
    end
  end
endmodule
