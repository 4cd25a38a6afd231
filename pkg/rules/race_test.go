//go:build race

package rules_test

// raceEnabled reports a build with the race detector.
const raceEnabled = true
