#pragma once
// Include FIRST in a .cpp whose float arithmetic must round exactly as written: it stops the compiler from
// fusing a multiply and an add into one FMA (GCC does so by default on targets with FMA, even in ISO mode),
// which would change results in the last bit. Where a fused multiply-add is meant, the code calls std::fma.
// Placed before every #include so that all functions of the file share the setting (GCC does not inline
// across differing fp-contract settings).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
