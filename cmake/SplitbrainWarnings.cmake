# splitbrain_set_warnings(<target>): the project's warning policy, one place for every target.
function(splitbrain_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                              -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
  if(SPLITBRAIN_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
