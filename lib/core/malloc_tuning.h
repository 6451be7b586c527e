// How a training process asks glibc's allocator to keep large buffers: not unmapped when freed and
// mapped (and page-faulted in) again at the next allocation, but kept in the heap. Page faults cost
// about 100x memory bandwidth on the machines the labs run on, and a library called every step (the
// BLAS) may allocate and free a large workspace per call. The scalelab command calls it first thing;
// a program that trains in-process (the step benchmark, tests) calls it too.
#pragma once

namespace scalelab {

void keep_large_allocations();

}  // namespace scalelab
