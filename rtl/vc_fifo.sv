// One input virtual channel's FIFO (the model's input_unit.rs buffer): `DEPTH` flits, a flit
// written in cycle t is readable (at the front, or behind the flits before it) from t + 1,
// and the front flit leaves in the cycle it is popped. Writing a full FIFO is a credit
// protocol violation upstream and is not guarded here (the model asserts on it).
module vc_fifo #(
    parameter int DEPTH = 4,
    parameter int WIDTH = 8
) (
    input  logic                       clk,
    input  logic                       rst,
    input  logic                       push,
    input  logic [WIDTH-1:0]           din,
    input  logic                       pop,
    output logic [WIDTH-1:0]           front,
    output logic [$clog2(DEPTH+1)-1:0] count
);
  localparam int PW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  localparam int CW = $clog2(DEPTH + 1);

  logic [WIDTH-1:0] mem[DEPTH];
  logic [PW-1:0] rd, wr;

  // Pointers wrap at DEPTH (any depth, not only powers of two).
  function automatic logic [PW-1:0] bump(input logic [PW-1:0] p);
    return (32'(p) + 1 == DEPTH) ? '0 : p + 1'b1;
  endfunction

  assign front = mem[rd];

  always_ff @(posedge clk) begin
    if (rst) begin
      rd <= '0;
      wr <= '0;
      count <= '0;
    end else begin
      if (push) begin
        mem[wr] <= din;
        wr <= bump(wr);
      end
      if (pop) rd <= bump(rd);
      count <= count + CW'(push) - CW'(pop);
    end
  end
endmodule
