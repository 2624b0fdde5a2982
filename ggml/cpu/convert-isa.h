// Entry points of the ISA-specific conversion files (declarations only: see convert.h).
#pragma once

#include <cstdint>

void ggml_cpu_f16_to_f32_avx2(const uint16_t * x, float * y, int64_t n);
void ggml_cpu_f32_to_f16_avx2(const float * x, uint16_t * y, int64_t n);
void ggml_cpu_bf16_to_f32_avx2(const uint16_t * x, float * y, int64_t n);
void ggml_cpu_f32_to_bf16_avx2(const float * x, uint16_t * y, int64_t n);
void ggml_cpu_f16_to_f32_avx512(const uint16_t * x, float * y, int64_t n);
void ggml_cpu_f32_to_f16_avx512(const float * x, uint16_t * y, int64_t n);
void ggml_cpu_bf16_to_f32_avx512(const uint16_t * x, float * y, int64_t n);
void ggml_cpu_f32_to_bf16_avx512(const float * x, uint16_t * y, int64_t n);
