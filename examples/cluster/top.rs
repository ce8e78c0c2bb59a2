//! `odeon-node top --http ADDR [--once]`: the dashboard's snapshot in a terminal
//! (ratatui), for machines without a browser. Reads `GET /api/snapshot` from a node
//! started with `--http` (`NodeBuilder::metrics_http`) once a second; `q` or Esc quits.
//! `--once` prints one frame to standard output and exits (no terminal needed).
//!
//! Two views: the overview (nodes, busiest actors, deepest mailboxes, the top of the
//! supervision tree, the message rate and the events) and the whole supervision
//! tree; `t` switches between them (`--once --tree` prints the tree view).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use odeon_remote::dashboard::{ActorState, Health, Snapshot, SupervisionNode, SupervisionView};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, List, ListItem, Paragraph, Row, Sparkline, Table};

/// How long one request may take before `top` says the node does not answer.
const TIMEOUT: Duration = Duration::from_secs(5);

pub const USAGE: &str = "usage: odeon-node top --http ADDR [--once [--tree]]";

/// What `top` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Nodes, actors, mailboxes, the top of the tree, rate and events.
    Overview,
    /// The whole supervision tree (as far as the snapshot lists it).
    Tree,
}

/// Reads one snapshot from the node whose HTTP endpoint is at `addr`.
pub fn fetch(addr: SocketAddr) -> Result<Snapshot, String> {
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| format!("{addr}: {e}"))?;
    s.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    write!(s, "GET /api/snapshot HTTP/1.1\r\nHost: {addr}\r\n\r\n").map_err(|e| e.to_string())?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)
        .map_err(|e| format!("{addr}: {e}"))?;
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{addr}: not an HTTP answer"))?;
    if !head.starts_with("HTTP/1.1 200") {
        let status = head.lines().next().unwrap_or_default();
        return Err(format!(
            "{addr}: {status} (is it an odeon node's --http address?)"
        ));
    }
    serde_json::from_str(body).map_err(|e| format!("{addr}: not a snapshot: {e}"))
}

fn health_style(h: Health) -> Style {
    let color = match h {
        Health::Alive => Color::Green,
        Health::Suspected => Color::Yellow,
        Health::Lost => Color::Red,
        Health::Left => Color::DarkGray,
    };
    Style::default().fg(color).add_modifier(Modifier::BOLD)
}

fn health_name(h: Health) -> &'static str {
    match h {
        Health::Alive => "alive",
        Health::Suspected => "suspected",
        Health::Lost => "lost",
        Health::Left => "left",
    }
}

/// The actor type without its module path (`app::jobs::Worker` -> `Worker`).
fn short(ty: &str) -> String {
    let base = ty.split('<').next().unwrap_or(ty);
    let tail = base.rsplit("::").next().unwrap_or(base);
    format!("{tail}{}", &ty[base.len()..])
}

/// The supervision tree as indented lines, supervisors first: `Type "name" #id
/// status`, with `restarts N` and `+N not shown` where they apply.
pub fn tree_lines(t: &SupervisionView) -> Vec<String> {
    fn walk(n: &SupervisionNode, depth: usize, out: &mut Vec<String>) {
        let mark = if n.children.is_empty() { "-" } else { "+" };
        let mut line = format!("{}{mark} {}", "  ".repeat(depth), short(&n.actor));
        if let Some(name) = &n.name {
            line.push_str(&format!(" \"{name}\""));
        }
        line.push_str(&format!(" #{} {}", n.id, state_name(n.status)));
        if n.restarts > 0 {
            line.push_str(&format!(" restarts {}", n.restarts));
        }
        if n.collapsed > 0 {
            line.push_str(&format!(" +{} not shown", n.collapsed));
        }
        out.push(line);
        for c in &n.children {
            walk(c, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for r in &t.roots {
        walk(r, 0, &mut out);
    }
    if t.collapsed > 0 {
        out.push(format!("+{} top-level actors not shown", t.collapsed));
    }
    out
}

fn state_name(s: ActorState) -> &'static str {
    match s {
        ActorState::Running => "running",
        ActorState::Restarting => "restarting",
        ActorState::Stopping => "stopping",
    }
}

/// The supervision tree panel, in either view (empty without observe).
fn tree_list(s: &Snapshot) -> List<'static> {
    let lines = s
        .actors
        .as_ref()
        .and_then(|a| a.supervision.as_ref())
        .map(tree_lines)
        .unwrap_or_default();
    let items: Vec<ListItem> = lines.into_iter().map(ListItem::new).collect();
    List::new(items).block(Block::default().borders(Borders::ALL).title(tree_title(s)))
}

fn tree_title(s: &Snapshot) -> String {
    match s.actors.as_ref().and_then(|a| a.supervision.as_ref()) {
        Some(t) => format!(
            " supervision tree · {} actors (at most {} listed) · t switches ",
            t.actors, t.bound
        ),
        None => " supervision tree: none (observe off) ".into(),
    }
}

/// Draws `s` on the whole frame: the overview.
// The binary draws through `draw_view`; tests call this.
#[allow(dead_code)]
pub fn draw(frame: &mut Frame, s: &Snapshot) {
    draw_view(frame, s, View::Overview);
}

/// Draws `s` on the whole frame, in `view`.
pub fn draw_view(frame: &mut Frame, s: &Snapshot, view: View) {
    let rate = s.samples.last().map_or(0.0, |x| x.rate);
    let heading = Paragraph::new(Line::from(format!(
        "odeon top · {} · {:.0} msg/s · t tree/overview · q quits",
        s.node, rate
    )))
    .style(Style::default().add_modifier(Modifier::REVERSED));
    if view == View::Tree {
        let [title, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(frame.area());
        frame.render_widget(heading, title);
        frame.render_widget(tree_list(s), body);
        return;
    }
    let [title, top, middle, chart, events] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(6),
        Constraint::Min(6),
        Constraint::Length(5),
        Constraint::Length(6),
    ])
    .areas(frame.area());
    frame.render_widget(heading, title);
    let [nodes, actors] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(top);
    let rows = s.members.iter().map(|m| {
        let who = if m.me {
            format!("{} *", m.node)
        } else {
            m.node.clone()
        };
        Row::new(vec![
            ratatui::text::Span::raw(who),
            ratatui::text::Span::raw(m.addr.clone()),
            ratatui::text::Span::styled(health_name(m.health), health_style(m.health)),
        ])
    });
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(9),
            ],
        )
        .header(Row::new(["node", "address", "health"]).style(Style::default().fg(Color::Gray)))
        .block(Block::default().borders(Borders::ALL).title(" nodes ")),
        nodes,
    );
    let (title, rows): (String, Vec<Row>) = match &s.actors {
        Some(a) => (
            format!(
                " actors · {} alive · {} handled · {} restarts ",
                a.alive, a.handled, a.restarts
            ),
            a.busiest
                .iter()
                .map(|l| {
                    Row::new(vec![
                        short(&l.actor),
                        l.name.clone().unwrap_or_else(|| "(unnamed)".into()),
                        l.recent.to_string(),
                        l.handled.to_string(),
                    ])
                })
                .collect(),
        ),
        None => (
            " actors: none (build with observe, System::builder().observe(true)) ".into(),
            Vec::new(),
        ),
    };
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(9),
                Constraint::Length(10),
            ],
        )
        .header(
            Row::new(["actor", "name", "last 1 s", "total"])
                .style(Style::default().fg(Color::Gray)),
        )
        .block(Block::default().borders(Borders::ALL).title(title)),
        actors,
    );
    let [deepest, tree] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(middle);
    let rows: Vec<Row> = s
        .actors
        .iter()
        .flat_map(|a| &a.deepest_mailboxes)
        .map(|m| {
            Row::new(vec![
                short(&m.actor),
                m.name.clone().unwrap_or_default(),
                format!("#{}", m.id),
                m.depth.to_string(),
            ])
        })
        .collect();
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Fill(2),
                Constraint::Fill(2),
                Constraint::Length(8),
                Constraint::Length(8),
            ],
        )
        .header(Row::new(["actor", "name", "id", "queued"]).style(Style::default().fg(Color::Gray)))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" deepest mailboxes "),
        ),
        deepest,
    );
    frame.render_widget(tree_list(s), tree);
    let width = usize::from(chart.width.saturating_sub(2));
    let rates: Vec<u64> = s.samples.iter().map(|x| x.rate.round() as u64).collect();
    let shown = &rates[rates.len().saturating_sub(width)..];
    let max = shown.iter().copied().max().unwrap_or(0);
    frame.render_widget(
        Sparkline::default()
            .data(shown)
            .style(Style::default().fg(Color::Cyan))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(format!(" messages per second (max {max}) ")),
            ),
        chart,
    );
    let items: Vec<ListItem> = s
        .events
        .iter()
        .rev()
        .map(|e| {
            let kind = format!("{:?}", e.kind);
            ListItem::new(format!("{kind:<14} {} {}", short(&e.subject), e.detail))
        })
        .collect();
    frame.render_widget(
        List::new(items).block(Block::default().borders(Borders::ALL).title(" events ")),
        events,
    );
}

/// `odeon-node top ARGS`.
pub fn main(mut args: impl Iterator<Item = String>) -> ExitCode {
    let (mut http, mut once, mut view) = (None, false, View::Overview);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--http" => http = args.next().and_then(|v| v.parse::<SocketAddr>().ok()),
            "--once" => once = true,
            "--tree" => view = View::Tree,
            _ => {
                eprintln!("odeon-node top: unknown flag {flag}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(addr) = http else {
        eprintln!("odeon-node top: --http ADDR (an address) is required\n{USAGE}");
        return ExitCode::from(2);
    };
    if once {
        return match fetch(addr) {
            Ok(s) => {
                print_once(&s, view);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("odeon-node top: {e}");
                ExitCode::from(1)
            }
        };
    }
    match live(addr, view) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odeon-node top: {e}");
            ExitCode::from(1)
        }
    }
}

/// One frame, 100 × 30, as plain text.
fn print_once(s: &Snapshot, view: View) {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30))
        .expect("an in-memory terminal");
    let _ = terminal.draw(|f| draw_view(f, s, view));
    let buffer = terminal.backend().buffer();
    for y in 0..buffer.area.height {
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        println!("{}", line.trim_end());
    }
}

/// Redraws once a second until `q` or Esc.
fn live(addr: SocketAddr, mut view: View) -> Result<(), String> {
    use ratatui::crossterm::event::{self, Event, KeyCode};
    let mut snapshot = fetch(addr)?;
    let mut terminal = ratatui::init();
    let result = loop {
        if let Err(e) = terminal.draw(|f| draw_view(f, &snapshot, view)) {
            break Err(e.to_string());
        }
        match event::poll(Duration::from_secs(1)) {
            Ok(true) => {
                if let Ok(Event::Key(k)) = event::read() {
                    match k.code {
                        KeyCode::Char('q') | KeyCode::Esc => break Ok(()),
                        KeyCode::Char('t') => {
                            view = match view {
                                View::Overview => View::Tree,
                                View::Tree => View::Overview,
                            };
                            // Redraw at once, not after the next second.
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            Ok(false) => {}
            Err(e) => break Err(e.to_string()),
        }
        match fetch(addr) {
            Ok(s) => snapshot = s,
            Err(e) => break Err(e),
        }
    };
    ratatui::restore();
    result
}
