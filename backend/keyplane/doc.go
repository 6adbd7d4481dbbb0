// Package keyplane serves the clients' shared keys to the edges over the
// hop: a key by kid, and the numbered changes of the key plane, which an
// edge follows with requests the Hub holds until there is a change (a long
// poll). The Hub learns of changes from the store's notifications
// (PostgreSQL's LISTEN) and, because notices are lost while a listening
// connection is down and SQLite has none, by reading the newest change
// number at an interval.
package keyplane
