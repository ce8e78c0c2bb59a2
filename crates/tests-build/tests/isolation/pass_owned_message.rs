// An owned message (buffers, strings, another actor's ref) compiles and is delivered.
use odeon::{Actor, ActorRef, Context, Handler, Message, System};

struct Log {
    lines: Vec<String>,
}
impl Actor for Log {}

struct Line(String);
impl Message for Line {
    type Reply = usize;
}
impl Handler<Line> for Log {
    fn handle(&mut self, msg: Line, _cx: &mut Context<Self>) -> usize {
        self.lines.push(msg.0);
        self.lines.len()
    }
}

struct Batch {
    bytes: Vec<u8>,
    reply_to: ActorRef<Log>,
}
impl Message for Batch {
    type Reply = ();
}

struct Forwarder;
impl Actor for Forwarder {}
impl Handler<Batch> for Forwarder {
    fn handle(&mut self, msg: Batch, _cx: &mut Context<Self>) {
        let _ = msg
            .reply_to
            .tell(Line(format!("{} bytes", msg.bytes.len())));
    }
}

fn main() {
    let system = System::builder().workers(1).build();
    let log = system.spawn(Log { lines: Vec::new() });
    let fwd = system.spawn(Forwarder);
    fwd.tell(Batch {
        bytes: vec![0; 16],
        reply_to: log.clone(),
    })
    .unwrap();
    system.run_until_quiescent();
    let n = system.block_on(log.ask(Line("done".to_owned()))).unwrap();
    assert_eq!(n, 2);
    assert!(system.shutdown());
}
