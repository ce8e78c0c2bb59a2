//! Compile-fail tests of odeon and odeon-macros, run by trybuild: see `tests/`. This
//! library is empty; a package needs a target besides its tests.

#![forbid(unsafe_code)]
