// Hosts N Verilated routers (rtl/router.sv or a designer's, Verilated with `--prefix Vdut`)
// for the fabric's co-simulation (`flitwave run --rtl`, testbenches/src/rtl). The fabric
// drives their ports every cycle through a pipe; see docs/rtl.md, "Co-simulation".
//
// Protocol: little-endian 32-bit words, one a value (the model's fields are at most 32 bits).
//   start   P NET VC_W PKT_W SEQ_W NODE_W KEY_W LEN_W SPAN_W N NODE[0] .. NODE[N-1]
//           the routers' shape and node ids; they are reset, then the reply is the word
//           FLIT_W, the flit width these fields add up to (the fabric checks it)
//   cycle   1, then per router: NFLITS, NFLITS x (PORT VC PACKET SEQ HEAD TAIL KIND SRC DEST
//           KEY LEN SPAN), NCREDITS, NCREDITS x (PORT VC): what is on in_* and cr_in_* in
//           the cycle; every router is clocked once, and the reply is per router what is
//           then on out_* and cr_out_* (the next cycle's outputs) in the same format
//   idle    2 N: every router is clocked N cycles with nothing on its inputs (cycles the
//           fabric skipped); the reply is the number of those cycles in which some router
//           had something on its outputs (0 for a router that holds nothing)
//   end     0: the routers' final blocks run and the program exits
#include "Vdut.h"
#include "verilated.h"
#include "ports.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <vector>

namespace {

using ports::get;
using ports::put;

// Standard input, read without blocking: a frame is waited for by polling a while (the
// fabric answers within microseconds, and a process put to sleep takes tens of them to
// wake), then by sleeping in poll().
constexpr int SPINS = 2000;
unsigned char in_buf[1 << 16];
size_t in_pos = 0, in_len = 0;

bool fill() {
    if (in_pos == in_len) in_pos = in_len = 0;
    for (int spins = 0;;) {
        const ssize_t n = read(0, in_buf + in_len, sizeof in_buf - in_len);
        if (n > 0) {
            in_len += static_cast<size_t>(n);
            return true;
        }
        if (n == 0) return false;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        if (++spins > SPINS) {
            pollfd p{0, POLLIN, 0};
            poll(&p, 1, -1);
        } else {
            sched_yield();  // another process that can run (the fabric, under load) runs
        }
    }
}

bool read_words(uint32_t* w, size_t n) {
    auto* out = reinterpret_cast<unsigned char*>(w);
    size_t want = n * sizeof(uint32_t);
    while (want > 0) {
        if (in_pos == in_len && !fill()) return false;
        const size_t k = std::min(want, in_len - in_pos);
        std::memcpy(out, in_buf + in_pos, k);
        in_pos += k;
        out += k;
        want -= k;
    }
    return true;
}

uint32_t word() {
    uint32_t w;
    if (!read_words(&w, 1)) {
        std::fprintf(stderr, "cosim: the fabric closed the pipe\n");
        std::exit(3);
    }
    return w;
}

std::vector<uint32_t> out;
// The pipe to the fabric: standard output as the program began. What the routers print
// ($display) goes to standard error instead.
FILE* pipe_out = nullptr;

void emit(uint32_t w) {
    out.push_back(w);
}

void tick(Vdut& r) {
    r.clk = 1;
    r.eval();
    r.clk = 0;
    r.eval();
}

// The flit fields in wire order, from bit 0: head, tail, packet, seq, kind, src, dest, key,
// len, span (docs/rtl.md). The protocol's order is packet, seq, head, tail, kind, ...
struct Layout {
    int widths[10];
    int lsb[10];
    int flit_w;
};

}  // namespace

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    pipe_out = fdopen(dup(1), "wb");
    dup2(2, 1);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    const int P = static_cast<int>(word()), NET = static_cast<int>(word()), VC_W = static_cast<int>(word());
    int w[6];
    for (int& x : w) x = static_cast<int>(word());
    const int PKT_W = w[0], SEQ_W = w[1], NODE_W = w[2], KEY_W = w[3], LEN_W = w[4], SPAN_W = w[5];
    (void)NET;
    const uint32_t n = word();
    // Protocol order: packet, seq, head, tail, kind, src, dest, key, len, span.
    Layout L{};
    const int order_w[10] = {PKT_W, SEQ_W, 1, 1, 2, NODE_W, NODE_W, KEY_W, LEN_W, SPAN_W};
    // Bit positions: head 0, tail 1, packet 2, seq 2 + PKT_W, then the header.
    int b = 2 + PKT_W + SEQ_W;
    const int fixed[4] = {2, 2 + PKT_W, 0, 1};
    for (int i = 0; i < 10; ++i) {
        L.widths[i] = order_w[i];
        if (i < 4) {
            L.lsb[i] = fixed[i];
        } else {
            L.lsb[i] = b;
            b += order_w[i];
        }
    }
    L.flit_w = b;
    std::vector<std::unique_ptr<Vdut>> routers;
    for (uint32_t i = 0; i < n; ++i) {
        auto r = std::make_unique<Vdut>();
        r->node_id = word();
        r->clk = 0;
        r->rst = 1;
        r->in_valid = 0;
        r->cr_in_valid = 0;
        r->eval();
        tick(*r);
        r->rst = 0;
        r->eval();
        routers.push_back(std::move(r));
    }
    const uint32_t flit_w = L.flit_w;
    std::fwrite(&flit_w, sizeof flit_w, 1, pipe_out);
    std::fflush(pipe_out);
    uint32_t f[12];
    for (;;) {
        const uint32_t command = word();
        if (command == 0) break;
        if (command == 2) {
            const uint32_t cycles = word();
            uint32_t busy = 0;
            for (uint32_t c = 0; c < cycles; ++c) {
                bool any = false;
                for (auto& rp : routers) {
                    Vdut& r = *rp;
                    r.in_valid = 0;
                    r.cr_in_valid = 0;
                    r.eval();
                    tick(r);
                    for (int p = 0; p < P; ++p) any = any || get(r.out_valid, p, 1) || get(r.cr_out_valid, p, 1);
                }
                busy += any;
            }
            std::fwrite(&busy, sizeof busy, 1, pipe_out);
            std::fflush(pipe_out);
            continue;
        }
        out.clear();
        for (auto& rp : routers) {
            Vdut& r = *rp;
            r.in_valid = 0;
            r.cr_in_valid = 0;
            const uint32_t nf = word();
            for (uint32_t k = 0; k < nf; ++k) {
                if (!read_words(f, 12)) std::exit(3);
                const int p = static_cast<int>(f[0]);
                put(r.in_valid, p, 1, 1);
                put(r.in_vc, p * VC_W, VC_W, f[1]);
                for (int i = 0; i < 10; ++i) put(r.in_flit, p * L.flit_w + L.lsb[i], L.widths[i], f[2 + i]);
            }
            const uint32_t nc = word();
            for (uint32_t k = 0; k < nc; ++k) {
                if (!read_words(f, 2)) std::exit(3);
                put(r.cr_in_valid, static_cast<int>(f[0]), 1, 1);
                put(r.cr_in_vc, static_cast<int>(f[0]) * VC_W, VC_W, f[1]);
            }
            r.eval();
            tick(r);
            // What is on the outputs in the next cycle.
            size_t at = out.size();
            emit(0);
            for (int p = 0; p < P; ++p) {
                if (!get(r.out_valid, p, 1)) continue;
                ++out[at];
                emit(static_cast<uint32_t>(p));
                emit(static_cast<uint32_t>(get(r.out_vc, p * VC_W, VC_W)));
                for (int i = 0; i < 10; ++i) emit(static_cast<uint32_t>(get(r.out_flit, p * L.flit_w + L.lsb[i], L.widths[i])));
            }
            at = out.size();
            emit(0);
            for (int p = 0; p < P; ++p) {
                if (!get(r.cr_out_valid, p, 1)) continue;
                ++out[at];
                emit(static_cast<uint32_t>(p));
                emit(static_cast<uint32_t>(get(r.cr_out_vc, p * VC_W, VC_W)));
            }
        }
        std::fwrite(out.data(), sizeof(uint32_t), out.size(), pipe_out);
        std::fflush(pipe_out);
    }
    for (auto& r : routers) r->final();
    return 0;
}
