//go:build !unix

package safefile

// nonblock is 0: outside Unix no file in a file system blocks an open.
const nonblock = 0
