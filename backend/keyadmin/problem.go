package keyadmin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Problem returns the problem that answers a refusal of the key
// administration (this package's errors, and the rules of package
// clientkey), saying it of client and kid where it names them; any other
// error as it is. The Admin API answers the database's refusals by it, and
// a registry file's administration (registryadmin) its own, so that both
// are worded alike.
func Problem(err error, client, kid string) error {
	var weaker *clientkey.WeakerError
	var lockOut *clientkey.LockOutError
	switch {
	case errors.As(err, &weaker):
		return problem.New(http.StatusConflict, problem.CodeWeakerKey, weaker.Error())
	case errors.As(err, &lockOut):
		return problem.New(http.StatusConflict, problem.CodeLastActiveKey, lockOut.Error())
	case errors.Is(err, ErrInvalidKey):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	case errors.Is(err, ErrNoClient):
		return problem.New(http.StatusNotFound, problem.CodeNotFound, fmt.Sprintf("no client %q", client))
	case errors.Is(err, ErrNoKeys):
		return problem.New(http.StatusConflict, problem.CodeNoKeyToRotate, fmt.Sprintf("client %q has no keys: add one", client))
	case errors.Is(err, ErrNoKey):
		return problem.New(http.StatusNotFound, problem.CodeNotFound, fmt.Sprintf("no key with kid %q", kid))
	case errors.Is(err, ErrKidTaken):
		return problem.New(http.StatusConflict, problem.CodeConflict, fmt.Sprintf("kid %q already exists", kid))
	}
	return err
}
