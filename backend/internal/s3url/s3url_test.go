package s3url

import (
	"net/url"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		query   string
		want    Service
		wantErr string // in the error, which must not quote "s3cret"
	}{
		{"none", "", Service{}, ""},
		{"the docs' spelling", "endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true",
			Service{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", PathStyle: true}, ""},
		{"gocloud.dev's spelling", "use_path_style=1", Service{PathStyle: true}, ""},
		{"gocloud.dev's older spelling", "s3ForcePathStyle=true", Service{PathStyle: true}, ""},
		{"spellings that agree", "path_style=false&s3ForcePathStyle=false", Service{}, ""},
		{"spellings that disagree", "path_style=true&use_path_style=false", Service{}, "path_style and use_path_style disagree"},
		{"not a boolean", "path_style=yes", Service{}, `path_style="yes" is not a boolean`},
		{"an endpoint of another scheme", "endpoint=ftp://hdc:s3cret@127.0.0.1", Service{}, "endpoint="},
		{"an endpoint without a host", "endpoint=https:///bucket", Service{}, "endpoint="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(q)
			switch {
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.query, got, err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "s3cret")):
				t.Errorf("Parse(%q) = %v; want an error saying %q, quoting no credential", tt.query, err, tt.wantErr)
			}
		})
	}
}

// TestGocloud: the URL gocloud.dev's s3blob reads has the path style in
// its one spelling and the rest as it was; another bucket's URL is left
// as it is.
func TestGocloud(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"s3://audit?endpoint=http://127.0.0.1:9000&path_style=true&region=us-east-1",
			"s3://audit?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true"},
		{"s3://audit?s3ForcePathStyle=true&kmskeyid=k", "s3://audit?kmskeyid=k&use_path_style=true"},
		{"s3://hdc:pw@audit?path_style=false&use_path_style=false", "s3://hdc:pw@audit"},
		{"file:///var/lib/hdc-audit?path_style=true", "file:///var/lib/hdc-audit?path_style=true"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			if got, err := Gocloud(tt.url); err != nil || got != tt.want {
				t.Errorf("Gocloud(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
			}
		})
	}
	if _, err := Gocloud("s3://audit?path_style=maybe"); err == nil {
		t.Error("Gocloud took path_style=maybe")
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"s3://records/hdc?region=eu-west-1&token=s3cret", "s3://records/hdc"},
		{"s3://records/hdc?endpoint=https://minio:s3cret@s3.internal:9000/?x=s3cret&path_style=true", "s3://records/hdc at https://minio:xxxxx@s3.internal:9000/"},
		{"s3://hdc:s3cret@audit", "s3://hdc:xxxxx@audit"},
		{"file:///var/lib/hdc-audit", "file:///var/lib/hdc-audit"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			if got := Describe(tt.url); got != tt.want {
				t.Errorf("Describe(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}
