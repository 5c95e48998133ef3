#pragma once
// Counter dtypes: int64 is exact; float32, float16 and bfloat16 are emulated with true
// round-to-nearest-even after every addition, so their saturation is real.
#include <cstdint>
#include <string>

namespace shardlens {

enum class CounterDtype { Int64, Float32, Float16, BFloat16 };

std::string to_string(CounterDtype dtype);
CounterDtype parse_counter_dtype(const std::string& text);  // throws InputError

// Rounds a non-negative value to the nearest representable value of the dtype (ties to
// even); values beyond the format's largest finite number become +infinity.
double round_to_dtype(double value, CounterDtype dtype);

// Bit patterns of float16 and bfloat16 values, for collectives that carry 16-bit counters on
// the wire (NCCL). to_bits16 rounds to the dtype first; dtype must be Float16 or BFloat16.
uint16_t to_bits16(double value, CounterDtype dtype);
double from_bits16(uint16_t bits, CounterDtype dtype);

// The count at which adding 1 no longer changes the value (2048 for float16, ...); 0 for int64.
double stall_count(CounterDtype dtype);

}  // namespace shardlens
