package protocol

// EnablementOn reports whether an enablement decision, of whatever scope,
// turns its customization on. A decision of a kind this package does not
// know counts as on, the default of a customization without one.
func EnablementOn(e CustomizationEnablement) bool {
	switch e := e.(type) {
	case *CustomizationEnablementGlobal:
		return e.Enabled
	case *CustomizationEnablementWorkspace:
		return e.Enabled
	case *CustomizationEnablementSession:
		return e.Enabled
	}
	return true
}
