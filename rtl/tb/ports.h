// Bits of Verilated ports of any width (CData to VlWide), for the testbenches that drive
// rtl/router.sv: tb.cpp (one router, text lines) and cosim.cpp (the fabric's co-simulation).
#pragma once

#include <cstdint>
#include <type_traits>

namespace ports {

// Bits [lsb, lsb + w) of a Verilated port of any width.
template <typename T> void put(T& v, int lsb, int w, uint64_t x) {
    for (int i = 0; i < w; ++i) {
        const int b = lsb + i;
        const uint64_t bit = (x >> i) & 1;
        if constexpr (std::is_integral_v<T>) {
            v = static_cast<T>((v & ~(T(1) << b)) | (T(bit) << b));
        } else {
            uint32_t& word = v.data()[b / 32];
            word = (word & ~(1u << (b % 32))) | (static_cast<uint32_t>(bit) << (b % 32));
        }
    }
}

template <typename T> uint64_t get(const T& v, int lsb, int w) {
    uint64_t x = 0;
    for (int i = 0; i < w; ++i) {
        const int b = lsb + i;
        uint64_t bit;
        if constexpr (std::is_integral_v<T>) {
            bit = (v >> b) & 1;
        } else {
            bit = (v.data()[b / 32] >> (b % 32)) & 1;
        }
        x |= bit << i;
    }
    return x;
}

}  // namespace ports
