# Included by setup.sh's cmake configure of llama.cpp after each project()
# (-DCMAKE_PROJECT_INCLUDE=this file; it acts on the first, the top-level
# one, and returns at once for ggml's own project()), to make
# the one-off build of llama-server cheap on two cores without touching a
# line of llama.cpp. When every target is defined, it lowers the
# optimisation of the code that is not on the hot path (the HTTP server,
# its JSON, the chat templates and tool-call parsers, argument parsing,
# the multimodal library the server links but SmolLM2 never uses, and
# llama's own graph building, loading and sampling) to -O1, and compiles
# those targets as unity builds, so the big headers (nlohmann/json,
# cpp-httplib) are parsed once per batch of files instead of once per file.
# ggml, which does the arithmetic of every token, keeps Release's -O3 and
# this CPU's instruction set (GGML_NATIVE).
#
# REALMODEL_LEAN_OPT overrides the level (-O2, -O0), REALMODEL_LEAN_UNITY=OFF
# turns the unity builds off: both only to measure what each is worth.

if(DEFINED _REALMODEL_LEAN)
	return()
endif()
set(_REALMODEL_LEAN ON)

if(NOT DEFINED REALMODEL_LEAN_OPT)
	set(REALMODEL_LEAN_OPT -O1)
endif()
if(NOT DEFINED REALMODEL_LEAN_UNITY)
	set(REALMODEL_LEAN_UNITY ON)
endif()

function(_realmodel_lean)
	set(lean llama llama-common llama-common-base mtmd server-context
		llama-server-impl llama-server cpp-httplib vendor-hash llama-ui)
	foreach(t IN LISTS lean)
		if(NOT TARGET ${t})
			continue()
		endif()
		target_compile_options(${t} PRIVATE ${REALMODEL_LEAN_OPT})
		if(REALMODEL_LEAN_UNITY)
			set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
		endif()
	endforeach()
	# Files whose own file-level names clash with another file's when
	# they share a unity batch compile on their own.
	if(REALMODEL_LEAN_UNITY)
		set_source_files_properties("${CMAKE_SOURCE_DIR}/common/json.cpp"
			TARGET_DIRECTORY llama-common PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
		set_source_files_properties("${CMAKE_SOURCE_DIR}/tools/mtmd/mtmd-helper.cpp"
			"${CMAKE_SOURCE_DIR}/tools/mtmd/mtmd-helper-gen.cpp"
			TARGET_DIRECTORY mtmd PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
	endif()
	message(STATUS "realmodel: ${REALMODEL_LEAN_OPT}, unity ${REALMODEL_LEAN_UNITY} for: ${lean}")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _realmodel_lean)
