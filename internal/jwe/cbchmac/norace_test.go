//go:build !race

package cbchmac

const raceEnabled = false
