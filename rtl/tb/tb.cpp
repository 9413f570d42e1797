// Drives one Verilated `router` (rtl/router.sv) from a stimulus on stdin and prints what
// leaves it, cycle by cycle. Used by testbenches/tests/rtl.rs; see docs/rtl.md.
//
// Input lines (cycles count from the first cycle after reset, the model's cycle 0):
//   w P NET VC_W PKT_W SEQ_W NODE_W KEY_W LEN_W SPAN_W    the router's shape (first line)
//   n NODE                                                the router's node id
//   f CYCLE PORT VC PACKET SEQ HEAD TAIL KIND SRC DEST KEY LEN SPAN
//                                                         a flit on input PORT in CYCLE
//   c CYCLE PORT VC                                       a credit on output PORT in CYCLE
//   r CYCLES                                              run CYCLES cycles
// Output lines:
//   o CYCLE PORT VC PACKET SEQ HEAD TAIL KIND SRC DEST KEY LEN SPAN
//                                                         a flit on output PORT in CYCLE
//   k CYCLE PORT VC                                       a credit on cr_out of PORT in CYCLE
#include "Vrouter.h"
#include "verilated.h"
#include "ports.h"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ports::get;
using ports::put;

struct Flit {
    int port, vc;
    uint64_t packet, seq, head, tail, kind, src, dest, key, len, span;
};

struct Credit {
    int port, vc;
};

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    int P = 0, NET = 0, VC_W = 0, PKT_W = 0, SEQ_W = 0, NODE_W = 0, KEY_W = 0, LEN_W = 0, SPAN_W = 0;
    uint64_t node = 0, cycles = 0;
    std::map<uint64_t, std::vector<Flit>> flits;
    std::map<uint64_t, std::vector<Credit>> credits;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string tag;
        in >> tag;
        if (tag == "w") {
            in >> P >> NET >> VC_W >> PKT_W >> SEQ_W >> NODE_W >> KEY_W >> LEN_W >> SPAN_W;
        } else if (tag == "n") {
            in >> node;
        } else if (tag == "f") {
            uint64_t c;
            Flit f{};
            in >> c >> f.port >> f.vc >> f.packet >> f.seq >> f.head >> f.tail >> f.kind >> f.src >> f.dest >> f.key >> f.len >> f.span;
            flits[c].push_back(f);
        } else if (tag == "c") {
            uint64_t c;
            Credit k{};
            in >> c >> k.port >> k.vc;
            credits[c].push_back(k);
        } else if (tag == "r") {
            in >> cycles;
        } else if (!tag.empty()) {
            std::fprintf(stderr, "tb: unknown line: %s\n", line.c_str());
            return 2;
        }
    }
    const int FLIT_W = 2 + PKT_W + SEQ_W + 2 + 2 * NODE_W + KEY_W + LEN_W + SPAN_W;

    Vrouter r;
    r.node_id = static_cast<uint32_t>(node);
    r.clk = 0;
    r.rst = 1;
    r.eval();
    r.clk = 1;
    r.eval();
    r.clk = 0;
    r.rst = 0;
    r.eval();
    for (uint64_t t = 0; t < cycles; ++t) {
        r.in_valid = 0;
        r.cr_in_valid = 0;
        for (const Flit& f : flits[t]) {
            put(r.in_valid, f.port, 1, 1);
            put(r.in_vc, f.port * VC_W, VC_W, f.vc);
            int b = f.port * FLIT_W;
            const std::pair<int, uint64_t> fields[] = {
                {1, f.head}, {1, f.tail}, {PKT_W, f.packet}, {SEQ_W, f.seq}, {2, f.kind}, {NODE_W, f.src},
                {NODE_W, f.dest}, {KEY_W, f.key}, {LEN_W, f.len}, {SPAN_W, f.span},
            };
            for (const auto& [w, x] : fields) {
                put(r.in_flit, b, w, x);
                b += w;
            }
        }
        for (const Credit& k : credits[t]) {
            put(r.cr_in_valid, k.port, 1, 1);
            put(r.cr_in_vc, k.port * VC_W, VC_W, k.vc);
        }
        r.eval();
        for (int p = 0; p < P; ++p) {
            if (get(r.out_valid, p, 1)) {
                std::printf("o %llu %d %llu", static_cast<unsigned long long>(t), p,
                            static_cast<unsigned long long>(get(r.out_vc, p * VC_W, VC_W)));
                const int widths[] = {PKT_W, SEQ_W, 1, 1, 2, NODE_W, NODE_W, KEY_W, LEN_W, SPAN_W};
                const int at[] = {2, 2 + PKT_W, 0, 1, 2 + PKT_W + SEQ_W};
                // packet, seq, head, tail, then the header fields in order.
                int b = p * FLIT_W + at[4];
                for (int i = 0; i < 10; ++i) {
                    const int lsb = i < 4 ? p * FLIT_W + at[i] : b;
                    std::printf(" %llu", static_cast<unsigned long long>(get(r.out_flit, lsb, widths[i])));
                    if (i >= 4) b += widths[i];
                }
                std::printf("\n");
            }
            if (get(r.cr_out_valid, p, 1)) {
                std::printf("k %llu %d %llu\n", static_cast<unsigned long long>(t), p,
                            static_cast<unsigned long long>(get(r.cr_out_vc, p * VC_W, VC_W)));
            }
        }
        r.clk = 1;
        r.eval();
        r.clk = 0;
        r.eval();
    }
    r.final();
    return 0;
}
