"""Prints lines slowly, each with the time it was printed: `tick <n> at <epoch ms>`, every `interval`
seconds, `count` of them; a line of HTML that must be shown as text; a log line on standard error for
each; then `final answer: <the message>`."""

import sys
import time

message = sys.stdin.read().strip()
count, interval = int(sys.argv[1]), float(sys.argv[2])
print("<script>window.injected = true</script><b>not bold</b>", flush=True)
for number in range(1, count + 1):
    time.sleep(interval)
    print(f"tick {number} at {int(time.time() * 1000)}", flush=True)
    print(f"working on tick {number}", file=sys.stderr, flush=True)
print(f"final answer: {message}", flush=True)
