# Quantization module: HW configs (embedded from resources/hw_configs), insertion point graph,
# propagation solver, setups.
foreach(qs_hw_device CPU GPU NPU)
  string(TOLOWER ${qs_hw_device} qs_hw_file)
  set(qs_hw_path ${PROJECT_SOURCE_DIR}/resources/hw_configs/${qs_hw_file}.json)
  file(READ ${qs_hw_path} QS_HW_${qs_hw_device}_JSON)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${qs_hw_path})
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/builtin_hw_configs.cpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/quantization/builtin_hw_configs.cpp @ONLY)
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/setup_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/setup_import.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hw_config.cpp
  ${CMAKE_CURRENT_BINARY_DIR}/quantization/builtin_hw_configs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_queries.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_pattern.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fused_patterns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ignored_patterns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/insertion_point_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/merge_configs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/propagation_state.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_propagation_solver.cpp
  ${CMAKE_CURRENT_LIST_DIR}/branch_merging.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_setup_builder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_setup.cpp
  ${CMAKE_CURRENT_LIST_DIR}/finalize_setup.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_setup_report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantization_state.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantizer_parameters.cpp
)
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/insertion_point_values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/statistics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fake_quantize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/calibration.cpp
  ${CMAKE_CURRENT_LIST_DIR}/calibration_workflow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/qdq_export.cpp
  ${CMAKE_CURRENT_LIST_DIR}/branch_choice.cpp
)
