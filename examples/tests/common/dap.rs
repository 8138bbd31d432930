//! A Debug Adapter Protocol client, as VS Code is one: JSON messages, each
//! after a `Content-Length` header, written to the adapter's standard
//! input and read from its standard output (gdb's `-i=dap`, lldb-vscode).
//! It waits for the response to a request or for an event, keeping what
//! else came meanwhile for a later wait.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long a response or an awaited event may take: an attach, or a
/// first read of a rank's libraries, takes seconds on a busy machine.
const PATIENCE: Duration = Duration::from_secs(120);

/// One debug adapter, run as a child, and what it said.
pub struct Dap {
    child: Child,
    /// None once closed, at the end.
    stdin: Option<ChildStdin>,
    messages: Receiver<Result<Value, String>>,
    /// Messages read while waiting for another.
    pending: VecDeque<Value>,
    /// Every message read, for a failure's report.
    pub transcript: Vec<Value>,
    seq: i64,
}

impl Dap {
    /// Starts `command` (the adapter) with piped standard input and output.
    pub fn start(mut command: Command) -> Dap {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the debug adapter");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let message = read_message(&mut reader);
                let end = message.is_err();
                if tx.send(message).is_err() || end {
                    break;
                }
            }
        });
        Dap {
            child,
            stdin: Some(stdin),
            messages,
            pending: VecDeque::new(),
            transcript: Vec::new(),
            seq: 0,
        }
    }

    /// Sends `command` with `arguments`; returns its sequence number.
    pub fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body = json!({
            "seq": self.seq,
            "type": "request",
            "command": command,
            "arguments": arguments,
        })
        .to_string();
        let stdin = self.stdin.as_mut().expect("the adapter's input is open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("send {command} to the adapter: {e}"));
        self.seq
    }

    /// The next message, within what is left of `deadline`.
    fn next(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.messages.recv_timeout(left) {
            Ok(Ok(message)) => {
                self.transcript.push(message.clone());
                message
            }
            Ok(Err(e)) => panic!(
                "the adapter's output ended while waiting for {waiting_for}: {e}\n{}",
                self.report()
            ),
            Err(_) => panic!(
                "no {waiting_for} from the adapter within {PATIENCE:?}\n{}",
                self.report()
            ),
        }
    }

    /// The first message, kept or to come, for which `wanted` holds,
    /// called `what` if none comes.
    fn first(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&wanted) {
            return self.pending.remove(i).unwrap();
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = self.next(deadline, what);
            if wanted(&message) {
                return message;
            }
            self.pending.push_back(message);
        }
    }

    /// The response to request `seq` (its `command`), whatever its
    /// success.
    pub fn response(&mut self, seq: i64, command: &str) -> Value {
        self.first(&format!("the response to {command}"), |m| {
            m["type"] == "response" && m["request_seq"] == seq
        })
    }

    /// `command` with `arguments`, which must succeed: its response's body.
    pub fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.send(command, arguments);
        let response = self.response(seq, command);
        assert_eq!(
            response["success"],
            true,
            "{command} failed: {response:#}\n{}",
            self.report()
        );
        response["body"].clone()
    }

    /// The first event named `event`, kept or to come, for which
    /// `wanted` holds.
    pub fn wait_event(&mut self, event: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        self.first(&format!("the event {event}"), |m| {
            m["type"] == "event" && m["event"] == event && wanted(m)
        })
    }

    /// The messages read so far, for a failure's report.
    pub fn report(&self) -> String {
        let lines: Vec<String> = self.transcript.iter().map(Value::to_string).collect();
        format!("the adapter said:\n{}", lines.join("\n"))
    }

    /// Ends the session (`disconnect`, the debuggee left running) and
    /// waits for the adapter to exit.
    pub fn disconnect(mut self) {
        let seq = self.send("disconnect", json!({ "terminateDebuggee": false }));
        let response = self.response(seq, "disconnect");
        assert_eq!(response["success"], true, "{response:#}");
        self.close();
    }

    /// Ends the session by closing the adapter's input, and waits for the
    /// adapter to exit.
    pub fn close(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("the adapter did not exit at the end of its input");
    }

    /// The variables of a frame's scope of locals, as the adapter gives
    /// them (`name`, `value`, `type`, `variablesReference`).
    pub fn locals(&mut self, frame_id: i64) -> Vec<Value> {
        let scopes = self.request("scopes", json!({ "frameId": frame_id }));
        let scopes = scopes["scopes"].as_array().expect("scopes").clone();
        let locals = scopes
            .iter()
            .find(|s| {
                let name = s["name"].as_str().unwrap_or("").to_lowercase();
                name.contains("local")
            })
            .unwrap_or_else(|| panic!("no scope of locals among {scopes:#?}"));
        let reference = locals["variablesReference"].clone();
        let variables = self.request("variables", json!({ "variablesReference": reference }));
        variables["variables"]
            .as_array()
            .expect("variables")
            .clone()
    }
}

impl Drop for Dap {
    fn drop(&mut self) {
        // A failed test leaves no adapter behind (it would hold its rank).
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One message: `Content-Length: N` (and any other header), an empty
/// line, then N bytes of JSON.
fn read_message(reader: &mut impl BufRead) -> Result<Value, String> {
    let mut length = None;
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("end of output".into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some(n) = line.strip_prefix("Content-Length:") {
            length = Some(
                n.trim()
                    .parse::<usize>()
                    .map_err(|e| format!("{line}: {e}"))?,
            );
        }
    }
    let mut body = vec![0; length.unwrap()];
    reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body).map_err(|e| format!("not JSON ({e}): {body:?}"))
}

/// The variable named `name` among `variables`.
pub fn variable<'a>(variables: &'a [Value], name: &str) -> &'a Value {
    variables
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variable {name} among {variables:#?}"))
}
