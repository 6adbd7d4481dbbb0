package opscmd

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// clientNames names the clients of audit records, each asked of the API
// once: the names hdc audit list adds to a line whose record's actor or
// entity, or the client whose key a key action concerns (its owner), is a
// client with a name.
type clientNames struct {
	api   adminapi.API
	known map[string]string // client id → name, "" for none or no such client
}

func newClientNames(api adminapi.API) *clientNames {
	return &clientNames{api: api, known: map[string]string{}}
}

// line returns a listed record (its canonical form and its hash) with a
// last member "names", the name of each named client it holds, by id:
// after the hash, so that the record's bytes before it stay as the trail
// holds them.
func (n *clientNames) line(ctx context.Context, item json.RawMessage) ([]byte, error) {
	var r struct {
		Client string `json:"client"`
		Entity struct {
			Kind, ID string
		} `json:"entity"`
		Owner string `json:"owner"`
	}
	if err := json.Unmarshal(item, &r); err != nil {
		return nil, err
	}
	ids := []string{r.Client, r.Owner}
	if r.Entity.Kind == "client" {
		ids = append(ids, r.Entity.ID)
	}
	names := map[string]string{}
	for _, id := range ids {
		name, err := n.name(ctx, id)
		if err != nil {
			return nil, err
		}
		if name != "" {
			names[id] = name
		}
	}
	if len(names) == 0 {
		return item, nil
	}
	b, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(bytes.TrimSpace(item), []byte("}"))
	return append(append(append(out[:len(out):len(out)], `,"names":`...), b...), '}'), nil
}

// name returns the name of the client id, "" when it has none or is gone.
func (n *clientNames) name(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	if name, ok := n.known[id]; ok {
		return name, nil
	}
	c, err := n.api.GetClient(ctx, id)
	if err != nil && !isNotFound(err) {
		return "", err
	}
	n.known[id] = c.Name
	return c.Name, nil
}
