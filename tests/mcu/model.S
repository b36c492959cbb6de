/* The model embedded in the image's flash (the FLASH region of boards/BOARD.ld): its
 * graph JSON, params blob, one input and the expected output bytes, from the files
 * CMake names (MCU_MODEL_JSON, MCU_MODEL_PARAMS, MCU_MODEL_INPUT, MCU_MODEL_OUTPUT). The
 * params start 16-byte aligned so constants can be read where they lie. */
#include "embed.inc"

EMBED(mcu_model_json, MCU_MODEL_JSON)
EMBED(mcu_model_params, MCU_MODEL_PARAMS)
EMBED(mcu_model_input, MCU_MODEL_INPUT)
EMBED(mcu_model_output, MCU_MODEL_OUTPUT)
