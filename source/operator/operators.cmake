# Operator definitions, one file per operator (see op_def.h). Adding an operator means
# adding its file here; the registry is generated from this list.
set(CVML_OPERATOR_SOURCES
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
  # -- upstream aliases
  aliases.cpp
)
# Shared helpers (not registered).
set(CVML_OPERATOR_SUPPORT_SOURCES
  op_def.cpp
  op_common.cpp
)
