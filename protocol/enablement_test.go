package protocol

import "testing"

func TestEnablementOn(t *testing.T) {
	tests := []struct {
		name string
		e    CustomizationEnablement
		want bool
	}{
		{"global off", &CustomizationEnablementGlobal{Enabled: false}, false},
		{"workspace on", &CustomizationEnablementWorkspace{Enabled: true}, true},
		{"session off", &CustomizationEnablementSession{Enabled: false}, false},
		{"none", nil, true},
	}
	for _, tt := range tests {
		if got := EnablementOn(tt.e); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
