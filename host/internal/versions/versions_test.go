package versions

import "testing"

// TestMemory: the memory returns each client's last version, forgets the
// least recently put client first once past its limit, and a put of a
// remembered client makes it the most recent.
func TestMemory(t *testing.T) {
	type put struct{ client, version string }
	for _, tc := range []struct {
		name  string
		limit int
		puts  []put
		want  map[string]string // client -> Get, "" for forgotten
	}{
		{"empty", 2, nil, map[string]string{"a": ""}},
		{"last version wins", 2, []put{{"a", "0.8.0"}, {"a", "1.1.0"}}, map[string]string{"a": "1.1.0"}},
		{"oldest forgotten", 2, []put{{"a", "1"}, {"b", "2"}, {"c", "3"}}, map[string]string{"a": "", "b": "2", "c": "3"}},
		{"put refreshes", 2, []put{{"a", "1"}, {"b", "2"}, {"a", "1"}, {"c", "3"}}, map[string]string{"a": "1", "b": "", "c": "3"}},
		{"limit below one holds one", 0, []put{{"a", "1"}, {"b", "2"}}, map[string]string{"a": "", "b": "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory(tc.limit)
			for _, p := range tc.puts {
				m.Put(p.client, p.version)
			}
			remembered := 0
			for client, want := range tc.want {
				if got := m.Get(client); got != want {
					t.Errorf("Get(%q) = %q, want %q", client, got, want)
				}
				if want != "" {
					remembered++
				}
			}
			if m.Len() != remembered {
				t.Errorf("Len() = %d, want %d", m.Len(), remembered)
			}
		})
	}
}
