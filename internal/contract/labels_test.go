package contract

import "testing"

func TestRoute(t *testing.T) {
	tests := []struct{ path, want string }{
		{PathLogin, PathLogin},
		{PathRefreshCompat, PathRefreshCompat},
		{PathRetrieve, PathRetrieve},
		{PathAuditEvents, PathAuditEvents},
		{PathAuditEvents + "/1", "other"},
		{PathSubscriptions, PathSubscriptions},
		{PathSubscriptions + "/4b1c9f8e-1d2a-4c57-9a0e-3f1b2c3d4e5f", PathSubscriptions + "/{id}"},
		{PathSubscriptions + "/", "other"},
		{PathSubscriptions + "/a/b", "other"},
		{PathSubscriptions + "/s1/deliveries", PathSubscriptions + "/{id}/deliveries"},
		{PathSubscriptions + "/s1/deliveries/d1", PathSubscriptions + "/{id}/deliveries/{delivery_id}"},
		{PathSubscriptions + "/s1/deliveries/d1/redeliver", PathSubscriptions + "/{id}/deliveries/{delivery_id}/redeliver"},
		{PathSubscriptions + "/s1/recover", PathSubscriptions + "/{id}/recover"},
		{PathSubscriptions + "/s1/test", PathSubscriptions + "/{id}/test"},
		{PathSubscriptions + "/s1/signing-key", PathSubscriptions + "/{id}/signing-key"},
		{PathSubscriptions + "/s1/deliveries/", "other"},
		{PathSubscriptions + "//deliveries", "other"},
		{PathSubscriptions + "/s1/deliveries/d1/other", "other"},
		{PathSubscriptions + "/s1/Test", "other"},
		{PathSubscriptions + "/s1/recover/x", "other"},
		{PathUpload + "/x", "other"},
		{"/connect-auth/v1/account/login?x=1", "other"},
		{"/", "other"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := Route(tt.path); got != tt.want {
				t.Fatalf("Route(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestMethod(t *testing.T) {
	for in, want := range map[string]string{"GET": "GET", "DELETE": "DELETE", "get": "other", "BREW": "other", "": "other"} {
		t.Run(in, func(t *testing.T) {
			if got := Method(in); got != want {
				t.Fatalf("Method(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
