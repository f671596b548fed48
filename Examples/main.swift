// The code samples of the README and the DocC articles. Every build compiles them, so a sample
// that no longer matches the API breaks the build; `scripts/docs` checks that each sample in
// the README and the articles appears in one of these files.
//
// Nothing here signs anyone in: the samples are compiled, not run (they need an authority and
// a user). Running this executable only lists them.
let samples = [
    "gettingStarted", "sharingAcrossApps", "securityModel", "migratingFromADAL", "handlingErrors", "sharingWithAzureTools",
    "readme",
]
print("stc-examples compiles the documentation's samples: \(samples.joined(separator: ", "))")
