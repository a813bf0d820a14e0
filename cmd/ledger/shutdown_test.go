package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/payledger/payledger/providers/stripe"
)

// TestE2EShutdownFinishesInFlight: SIGTERM arrives while a delivery's body is
// still being sent. The ledger must finish that request (store it, answer 200)
// before it exits, so nothing a provider is told was accepted is lost.
func TestE2EShutdownFinishesInFlight(t *testing.T) { forEachBackend(t, testShutdownFinishesInFlight) }

func testShutdownFinishesInFlight(t *testing.T, env map[string]string) {
	l := startLedger(t, env)
	id := "pi_3QxShutdown_01"
	body := piEvent("evt_sd_1", "payment_intent.succeeded", id, base, 300).body()

	conn, err := net.Dial("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /webhooks/stripe HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nStripe-Signature: %s\r\nContent-Length: %d\r\n\r\n",
		l.addr, stripe.Sign(body, secretOld, time.Now()), len(body))
	half := len(body) / 2
	if _, err := conn.Write(append([]byte(head), body[:half]...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the handler is now reading the body
	if err := l.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // shutdown has begun and is waiting for us
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatalf("finishing the body after SIGTERM: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer after SIGTERM: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight delivery answered %d, want 200", resp.StatusCode)
	}
	select {
	case err := <-l.done:
		if err != nil {
			t.Fatalf("ledger exited with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("ledger did not exit after finishing the in-flight request")
	}

	// What was acknowledged is stored: a fresh process sees it.
	l2 := startLedger(t, env)
	l2.waitPayment(t, id, statusIs("confirmed"))
	if code, body := l2.webhook(t, body, secretOld, time.Now()); code != http.StatusOK || body["outcome"] != "duplicate" {
		t.Errorf("redelivery after restart: %d %v, want duplicate", code, body)
	}
}
