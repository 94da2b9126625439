# write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already holds exactly TEXT, so that
# a generated file's timestamp (and what depends on it) moves only when its content does.
function(write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()
