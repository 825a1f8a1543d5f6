# Weight compression (int8/int4, sym/asym, group-wise, ratio mixing) and FP16 conversion.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/compression_mode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/integer_quantizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opset_upgrade.cpp
  ${CMAKE_CURRENT_LIST_DIR}/activation_statistics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/weight_compression.cpp
  ${CMAKE_CURRENT_LIST_DIR}/weight_compression_apply.cpp
  ${CMAKE_CURRENT_LIST_DIR}/weight_compression_report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compression_workflow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fp16_conversion.cpp
)
