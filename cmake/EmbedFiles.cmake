# scalelab_embed_files(OUT_VAR GLOB NAMESPACE FUNCTION COMMENT): compiles the text of the data
# files matching GLOB into the binary (cmake/embed_files.cmake writes the C++ file at build time),
# readable as NAMESPACE::FUNCTION(count) -> {name, text} pairs; sets OUT_VAR to the generated
# source to add to a library. The catalogs of data/machines, data/workloads and data/devices use it.
function(scalelab_embed_files out_var glob namespace function comment)
  file(GLOB files CONFIGURE_DEPENDS ${glob})
  set(cpp ${CMAKE_CURRENT_BINARY_DIR}/${function}_data.cpp)
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${cpp} "-DFILES=${files_arg}" -DNAMESPACE=${namespace} -DFUNCTION=${function}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
    COMMENT "${comment}" VERBATIM)
  set(${out_var} ${cpp} PARENT_SCOPE)
endfunction()
