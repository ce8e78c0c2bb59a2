//! `odeon-node top --http ADDR [--once]`: the dashboard's snapshot in a terminal
//! (ratatui), for machines without a browser. Reads `GET /api/snapshot` from a node
//! started with `--http` (`NodeBuilder::metrics_http`) once a second; `q` or Esc quits.
//! `--once` prints one frame to standard output and exits (no terminal needed).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use odeon_remote::dashboard::{Health, Snapshot};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, List, ListItem, Paragraph, Row, Sparkline, Table};

/// How long one request may take before `top` says the node does not answer.
const TIMEOUT: Duration = Duration::from_secs(5);

pub const USAGE: &str = "usage: odeon-node top --http ADDR [--once]";

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

/// Draws `s` on the whole frame.
pub fn draw(frame: &mut Frame, s: &Snapshot) {
    let [title, top, chart, events] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(6),
        Constraint::Length(6),
        Constraint::Length(7),
    ])
    .areas(frame.area());
    let rate = s.samples.last().map_or(0.0, |x| x.rate);
    frame.render_widget(
        Paragraph::new(Line::from(format!(
            "odeon top · {} · {:.0} msg/s · q quits",
            s.node, rate
        )))
        .style(Style::default().add_modifier(Modifier::REVERSED)),
        title,
    );
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
    let (mut http, mut once) = (None, false);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--http" => http = args.next().and_then(|v| v.parse::<SocketAddr>().ok()),
            "--once" => once = true,
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
                print_once(&s);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("odeon-node top: {e}");
                ExitCode::from(1)
            }
        };
    }
    match live(addr) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odeon-node top: {e}");
            ExitCode::from(1)
        }
    }
}

/// One frame, 100 × 30, as plain text.
fn print_once(s: &Snapshot) {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30))
        .expect("an in-memory terminal");
    let _ = terminal.draw(|f| draw(f, s));
    let buffer = terminal.backend().buffer();
    for y in 0..buffer.area.height {
        let line: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        println!("{}", line.trim_end());
    }
}

/// Redraws once a second until `q` or Esc.
fn live(addr: SocketAddr) -> Result<(), String> {
    use ratatui::crossterm::event::{self, Event, KeyCode};
    let mut snapshot = fetch(addr)?;
    let mut terminal = ratatui::init();
    let result = loop {
        if let Err(e) = terminal.draw(|f| draw(f, &snapshot)) {
            break Err(e.to_string());
        }
        match event::poll(Duration::from_secs(1)) {
            Ok(true) => {
                if let Ok(Event::Key(k)) = event::read()
                    && matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
                {
                    break Ok(());
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
