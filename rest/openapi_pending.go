package rest

// openAPIDocument is a placeholder until rest/openapi.go (BuildOpenAPI) lands.
func openAPIDocument(cfg Config) ([]byte, error) {
	return []byte(`{"openapi":"3.1.0"}`), nil
}
