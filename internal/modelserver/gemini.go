package modelserver

import (
	"net/http"
)

// geminiAPI is the Gemini API: POST /v1beta/models/M:generateContent and
// :streamGenerateContent (with ?alt=sse).
type geminiAPI struct{ stream bool }

func (geminiAPI) name() API { return Gemini }

func (g geminiAPI) parse(body []byte) (*conversation, error) {
	var req struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
		GenerationConfig *struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseSchema     map[string]any `json:"responseSchema"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	c := &conversation{stream: g.stream}
	for _, m := range req.Contents {
		if m.Role != "user" && m.Role != "" {
			continue
		}
		results := 0
		text := ""
		for _, p := range m.Parts {
			if _, ok := p["functionResponse"]; ok {
				results++
			} else if t, ok := p["text"].(string); ok {
				text += t + "\n"
			}
		}
		if results > 0 {
			if len(c.users) == 0 {
				c.users = append(c.users, userTurn{})
			}
			c.users[len(c.users)-1].results += results
			continue
		}
		c.users = append(c.users, userTurn{text: text})
	}
	if gc := req.GenerationConfig; gc != nil {
		switch {
		case gc.ResponseJSONSchema != nil:
			c.schema = gc.ResponseJSONSchema
		case gc.ResponseSchema != nil:
			c.schema = gc.ResponseSchema
		case gc.ResponseMimeType == "application/json":
			c.schema = map[string]any{}
		}
	}
	return c, nil
}

func (geminiAPI) fail(w http.ResponseWriter, status int, msg string) {
	st := "INTERNAL"
	switch status {
	case http.StatusBadRequest:
		st = "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		st = "UNAUTHENTICATED"
	case http.StatusForbidden:
		st = "PERMISSION_DENIED"
	case http.StatusNotFound:
		st = "NOT_FOUND"
	case http.StatusTooManyRequests:
		st = "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		st = "UNAVAILABLE"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

func (g geminiAPI) reply(w http.ResponseWriter, c *conversation, step Step, done <-chan struct{}) {
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	chunk := func(parts []any, finish bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish {
			cand["finishReason"] = "STOP"
		}
		out := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-scripted"}
		if finish {
			out["usageMetadata"] = usage
		}
		return out
	}
	var whole []any
	switch step.Kind {
	case KindCall:
		whole = []any{map[string]any{"functionCall": map[string]any{"name": step.Tool, "args": argsOf(step)}}}
	default:
		whole = []any{map[string]any{"text": step.Text}}
	}
	if !g.stream {
		if step.Kind == KindStall {
			<-done
			disconnect()
		}
		if step.Kind == KindDisconnect {
			disconnect()
		}
		writeJSON(w, http.StatusOK, chunk(whole, true))
		return
	}
	s := startSSE(w)
	if step.Kind == KindStall {
		<-done
		disconnect()
	}
	if step.Kind == KindCall {
		s.event("", chunk(whole, true))
		return
	}
	parts := chunks(step.Text)
	for i, part := range parts {
		last := i == len(parts)-1 && step.Kind != KindDisconnect
		s.event("", chunk([]any{map[string]any{"text": part}}, last))
	}
	if step.Kind == KindDisconnect {
		disconnect()
	}
	if len(parts) == 0 {
		s.event("", chunk([]any{map[string]any{"text": ""}}, true))
	}
}
