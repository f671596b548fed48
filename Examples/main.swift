// The code samples of the README, the DocC articles and the library's doc comments, one file per
// document. Every build compiles them, so a sample that no longer matches the API breaks the
// build; `scripts/docs` checks that each sample in those documents appears in one of these files.
//
// Nothing here signs anyone in: the samples are compiled, not run (they need an authority and
// a user). Running this executable only says so.
print("stc-examples: the documentation's code samples, compiled by every build and never run")
