// The P = 6 part of proofs_interleaved.cpp (see there).
#define CTPIPE_PROVE_P6
#include "proofs_interleaved.cpp"
