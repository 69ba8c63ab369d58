// The P = 7 and 8 part of proofs_zero_bubble.cpp (see there).
#define CTPIPE_PROVE_P78
#include "proofs_zero_bubble.cpp"
