/* The compiled plan embedded in the image's flash (docs/compiled-plan.md), from the file
 * CMake names (MCU_MODEL_PLAN), 16-byte aligned as cvml_graph_load_compiled() reads it in
 * place; and the model's input and expected output, as model.S embeds them. */
#include "embed.inc"

EMBED(mcu_model_plan, MCU_MODEL_PLAN)
EMBED(mcu_model_input, MCU_MODEL_INPUT)
EMBED(mcu_model_output, MCU_MODEL_OUTPUT)
