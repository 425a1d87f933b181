#!/usr/bin/env bash
# check_isa_symbols.sh OBJECT ISA: fails when the per-ISA object exports a
# symbol whose name lacks "isa_ISA" (runtime/kernels/float_kernels_body.h
# says why: the linker would merge such a weak definition with other
# translation units' copies, compiled for another instruction set), or when
# the baseline object holds an AVX (VEX or EVEX encoded) instruction, which
# a CPU without AVX could not run.
set -euo pipefail
object=$1; isa=$2
# DW.ref.__gxx_personality_v0 (emitted when a build has exception cleanups,
# e.g. under ASan) is a pointer to the C++ runtime's one personality
# routine, the same data in every object: merging it is harmless.
stray=$(nm --defined-only --extern-only "$object" | awk '{print $3}' | grep -v -- "isa_$isa" |
  grep -v -x 'DW.ref.__gxx_personality_v0' || true)
if [ -n "$stray" ]; then
  echo "$object exports symbols shared with other instruction sets' builds:" >&2
  echo "$stray" | c++filt | sed 's/^/  /' >&2
  exit 1
fi
if [ "$isa" = baseline ]; then
  avx=$(objdump -d --no-show-raw-insn "$object" | grep -E '%[yz]mm|\sv[a-z0-9]+(ps|pd|ss|sd|b|w|d|q)\s' |
    head -n 5 || true)
  if [ -n "$avx" ]; then
    echo "$object (baseline) holds AVX instructions:" >&2
    echo "$avx" >&2
    exit 1
  fi
fi
