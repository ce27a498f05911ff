// Hot loops of the study get an AVX2 clone picked at load time; the arithmetic is the same in both clones
// (no FMA contraction), so results do not depend on it.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KALEIDO_HOT __attribute__((target_clones("avx2", "default")))
#else
#define KALEIDO_HOT
#endif
