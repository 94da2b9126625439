# The Python package's extension module (python/, docs/python.md) is built when the interpreter
# CMake finds can import nanobind: scripts/setup.sh points Python_EXECUTABLE at its venv
# (build/.venv), and `pip install .` (scikit-build-core) at its build environment. The static
# layers are then compiled as position-independent code, so that one build serves both the
# scalelab executable and the module; -fno-semantic-interposition keeps calls within a library
# as inlinable as in a position-independent executable.
set(scalelab_python_default OFF)
if(NOT SCALELAB_SANITIZE AND NOT SCALELAB_FUZZ)
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                    OUTPUT_VARIABLE scalelab_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE scalelab_nanobind_rc ERROR_QUIET)
    if(scalelab_nanobind_rc EQUAL 0 AND EXISTS "${scalelab_nanobind_dir}")
      set(scalelab_python_default ON)
    endif()
  endif()
endif()
option(SCALELAB_PYTHON "build the Python extension module (import scalelab; needs nanobind)"
       ${scalelab_python_default})
if(SCALELAB_PYTHON)
  find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
  if(NOT scalelab_nanobind_dir)
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                    OUTPUT_VARIABLE scalelab_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  find_package(nanobind CONFIG REQUIRED PATHS "${scalelab_nanobind_dir}" NO_DEFAULT_PATH)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  add_compile_options(-fno-semantic-interposition)
endif()
message(STATUS "scalelab: Python module ${SCALELAB_PYTHON} (${Python_EXECUTABLE})")
