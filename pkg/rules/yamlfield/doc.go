// Package yamlfield decodes YAML the way the rules file is decoded: node
// by node, with every problem reported at its line and field path
// (Decoder), unknown fields named with a suggestion (Suggest), and values
// YAML would read as another type than a string refused with how to
// quote them (Value). Package rulefile builds its decoder on it.
package yamlfield
