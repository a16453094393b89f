package regtest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"
)

// apply injects the fault into one request and calls mark just before it
// does: a body fault on a response without a body serves it unchanged and
// does not call mark.
func (f *Fault) apply(w http.ResponseWriter, req *http.Request, next http.Handler, mark func()) {
	switch f.Kind {
	case Fault500, Fault502, Fault503:
		code, _ := strconv.Atoi(string(f.Kind))
		mark()
		writeError(w, code, "UNAVAILABLE", "injected fault "+string(f.Kind))
		return // the registry never sees the request: a failed PUT must not land
	case Fault429:
		ra := f.RetryAfter
		if ra == "" {
			ra = "1"
		}
		w.Header().Set("Retry-After", ra)
		mark()
		writeError(w, http.StatusTooManyRequests, "TOOMANYREQUESTS", "injected fault 429")
		return
	case FaultAnswer:
		ct := f.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
		mark()
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.Body))
		return
	case FaultSlow:
		d := f.Delay
		if d == 0 {
			d = 50 * time.Millisecond
		}
		mark()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-req.Context().Done():
		case <-t.C:
		}
		next.ServeHTTP(w, req)
		return
	case FaultReset:
		if req.Method != http.MethodGet {
			reset(w, nil, nil, mark)
			return
		}
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if req.Method != http.MethodGet || rec.Code != http.StatusOK || len(body) == 0 {
		copyHeader(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
		return
	}
	switch f.Kind {
	case FaultReset:
		reset(w, rec, body[:len(body)/2], mark)
		return
	case FaultTruncate:
		mark()
		copyHeader(w.Header(), rec.Header())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body[:len(body)/2])
		return
	case FaultCorrupt:
		mark()
		altered := append([]byte(nil), body...)
		altered[len(altered)/2] ^= 0x20
		copyHeader(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(altered)
		return
	}
	copyHeader(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// reset hijacks the connection, writes the recorded status, headers (with
// the full Content-Length) and part of the body when rec is set, and resets
// the connection.
func reset(w http.ResponseWriter, rec *httptest.ResponseRecorder, part []byte, mark func()) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "hijacking: "+err.Error(), http.StatusInternalServerError)
		return
	}
	mark()
	defer conn.Close()
	if rec != nil {
		writeRaw(buf, rec, part)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST, not FIN
	}
}

func writeRaw(buf *bufio.ReadWriter, rec *httptest.ResponseRecorder, part []byte) {
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
	h := rec.Header().Clone()
	h.Set("Content-Length", strconv.Itoa(rec.Body.Len()))
	_ = h.Write(buf)
	_, _ = buf.WriteString("\r\n")
	_, _ = buf.Write(part)
	_ = buf.Flush()
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append([]string(nil), v...)
	}
}
