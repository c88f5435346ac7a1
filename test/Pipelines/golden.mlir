// The host programs hir-lower prints for every example and every lit input,
// in seven option sets (fusion on, the default, and off), are those kept in test/Golden/: a change to the passes
// that changes any of them shows here as a diff. After an intended change,
// run `scripts/golden.py --update` and say in the commit why each file moved.
// RUN: %python %S/../../scripts/golden.py --check
