# CPU kernels, one file per operator (see ../cpu_kernel.h), registered by name.
set(CVML_CPU_KERNEL_SOURCES
  # -- nn and reductions
  conv2d.cpp
  dense.cpp
  max_pool2d.cpp
  upsampling.cpp
  sum.cpp
  max.cpp
  get_valid_counts.cpp
  non_max_suppression.cpp
  # -- element-wise, broadcast, clipping, indexing
  abs.cpp
  broadcast_add.cpp
  broadcast_div.cpp
  broadcast_greater.cpp
  broadcast_max.cpp
  broadcast_mul.cpp
  broadcast_sub.cpp
  clip.cpp
  cvm_clip.cpp
  cvm_left_shift.cpp
  cvm_lut.cpp
  cvm_precision.cpp
  cvm_right_shift.cpp
  elemwise_add.cpp
  elemwise_sub.cpp
  negative.cpp
  relu.cpp
  take.cpp
  where.cpp
  # -- shape and layout
  concatenate.cpp
  expand_dims.cpp
  flatten.cpp
  repeat.cpp
  reshape.cpp
  slice_like.cpp
  squeeze.cpp
  strided_slice.cpp
  tile.cpp
  transpose.cpp
)
# Shared helpers (not registered).
set(CVML_CPU_KERNEL_SUPPORT_SOURCES
  # -- conv2d's fast paths (conv2d_fast.h)
  conv2d_gemm.cpp
  conv2d_grouped.cpp
  # -- simd (speed): the level-neutral parts, then the kernels per instruction set
  ../simd/simd.cpp
  ../simd/gemm_s8.cpp
  ../simd/epilogue.cpp
  ../simd/x86/avx512/gemm_s8.cpp
  ../simd/x86/avx512/epilogue.cpp
  ../simd/x86/avx512/conv2d_grouped.cpp
  ../simd/x86/avx512/max_pool2d.cpp
  ../simd/x86/avx2/gemm_s8.cpp
  ../simd/x86/avx2/epilogue.cpp
  ../simd/x86/avx2/conv2d_grouped.cpp
  ../simd/x86/avx2/max_pool2d.cpp
)
