// Package adminapi declares the Admin API once: its operations (API),
// the route of each (Routes: method, path, roles, Idempotency-Key), and
// the wire types of its requests and answers. Package admin serves it
// (its Service implements API, its Handler binds each route to the
// handler of its operation by name), package adminclient calls it (its
// Client implements API, building each request from the route of the
// operation), and hdc's operator commands and the console take an API,
// the service in direct mode or the client in remote mode.
//
// It imports nothing of the backend but what both sides share
// (internal/contract, internal/clientkey, internal/problem): the wire
// types are the API's own, which the service maps its domain's types to,
// so that a caller of the API links none of the backend.
package adminapi
