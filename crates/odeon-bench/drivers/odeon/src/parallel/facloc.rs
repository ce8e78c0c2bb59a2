//! Online Facility Location (Savina #27, `shared/savina.md` §3.27): a producer feeds
//! customers, one at a time, to a tree of quadrant actors. A closed quadrant serves its
//! customers from the nearest facility it knows; when their total cost exceeds
//! ALPHA·√2·GRID_SIZE it opens a facility at its midpoint, splits into four child
//! quadrants and tells the tree. The result (how many facilities opened) depends on how
//! facility notices race with customers, so only sanity checks validate it.
//!
//! The points come from one `PseudoRandom` with the default seed that Savina never
//! re-seeds: each iteration continues the stream where the previous one stopped. The
//! driver thread keeps it between iterations ([`POINTS`]); during a run only the
//! producer owns it.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use odeon::{Actor, ActorRef, Context, Handler, Message};
use savina::rng::PseudoRandom;
use savina::{Outcome, Params};

use super::exited::finish_exited;
use crate::common;

/// Savina's static point generator, carried from one iteration to the next.
static POINTS: Mutex<Option<PseudoRandom>> = Mutex::new(None);

#[derive(Clone, Copy, Debug)]
struct Point {
    x: f64,
    y: f64,
}

impl Point {
    fn distance(self, o: Point) -> f64 {
        ((self.x - o.x).powi(2) + (self.y - o.y).powi(2)).sqrt()
    }
}

/// A closed box [x1, x2] × [y1, y2].
#[derive(Clone, Copy)]
struct Bounds {
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
}

impl Bounds {
    fn contains(&self, p: Point) -> bool {
        (self.x1..=self.x2).contains(&p.x) && (self.y1..=self.y2).contains(&p.y)
    }

    fn midpoint(&self) -> Point {
        Point {
            x: (self.x1 + self.x2) / 2.0,
            y: (self.y1 + self.y2) / 2.0,
        }
    }

    /// TOP_LEFT, TOP_RIGHT, BOT_LEFT, BOT_RIGHT: the order children are searched in.
    fn quarters(&self) -> [Bounds; 4] {
        let Point { x: fx, y: fy } = self.midpoint();
        let Bounds { x1, y1, x2, y2 } = *self;
        let b = |x1, y1, x2, y2| Bounds { x1, y1, x2, y2 };
        [
            b(x1, fy, fx, y2),
            b(fx, fy, x2, y2),
            b(x1, y1, fx, fy),
            b(fx, y1, x2, fy),
        ]
    }
}

/// Where a quadrant sits in its parent: an index into [`Bounds::quarters`].
type Position = usize;

/// The child diagonally opposite: TOP_LEFT ↔ BOT_RIGHT, TOP_RIGHT ↔ BOT_LEFT.
fn opposite(p: Position) -> Position {
    3 - p
}

struct Customer {
    producer: ActorRef<Producer>,
    point: Point,
}
struct NextCustomer;
struct Facility {
    from: Position,
    depth: usize,
    point: Point,
    from_child: bool,
}
struct RequestExit;
struct ConfirmExit {
    facilities: usize,
    customers: usize,
}

macro_rules! messages {
    ($($m:ty),*) => { $(impl Message for $m { type Reply = (); })* };
}
messages!(Customer, NextCustomer, Facility, RequestExit, ConfirmExit);

/// Draws the customers; sends the first when it starts, the next on each
/// `NextCustomer`, then `RequestExit`.
struct Producer {
    points: usize,
    produced: usize,
    grid: f64,
    rng: Option<PseudoRandom>,
    root: ActorRef<Quadrant>,
    /// The generator goes back to the driver when the producer exits.
    rng_back: Sender<PseudoRandom>,
}

impl Producer {
    fn produce(&mut self, cx: &Context<Self>) {
        let Some(rng) = self.rng.as_mut() else { return };
        let x = rng.next_double() * self.grid;
        let y = rng.next_double() * self.grid;
        let point = Point { x, y };
        let producer = cx.myself();
        let _ = self.root.tell(Customer { producer, point });
        self.produced += 1;
    }
}

impl Actor for Producer {
    fn started(&mut self, cx: &mut Context<Self>) {
        if self.points > 0 {
            self.produce(cx);
        }
    }
}

impl Handler<NextCustomer> for Producer {
    fn handle(&mut self, _: NextCustomer, cx: &mut Context<Self>) {
        if self.produced < self.points {
            self.produce(cx);
            return;
        }
        let _ = self.root.tell(RequestExit);
        if let Some(rng) = self.rng.take() {
            let _ = self.rng_back.send(rng);
        }
        cx.stop();
    }
}

/// What the root reports when it exits.
struct Report {
    facilities: usize,
    customers: usize,
}

struct Quadrant {
    /// `None` for the root, which reports to the driver instead.
    parent: Option<ActorRef<Quadrant>>,
    report: Option<Sender<Report>>,
    position: Position,
    bounds: Bounds,
    threshold: f64,
    depth: usize,
    /// Inherited from the ancestors, this quadrant's midpoint, then every one notified.
    local_facilities: Vec<Point>,
    known_facilities: usize,
    max_depth_of_known_open_facility: usize,
    /// The parent's customers at the split; the ones inside `bounds` are taken over
    /// when this quadrant starts.
    inherited: Option<Arc<[Point]>>,
    support_customers: Vec<Point>,
    total_cost: f64,
    /// Empty while the quadrant is closed.
    children: Vec<ActorRef<Quadrant>>,
    children_facilities: usize,
    children_customers: usize,
    confirmed: usize,
}

impl Quadrant {
    fn new(bounds: Bounds, threshold: f64, report: Sender<Report>) -> Self {
        Self {
            parent: None,
            report: Some(report),
            position: 0,
            bounds,
            threshold,
            depth: 0,
            local_facilities: vec![bounds.midpoint()],
            known_facilities: 0,
            max_depth_of_known_open_facility: 0,
            inherited: None,
            support_customers: Vec::new(),
            total_cost: 0.0,
            children: Vec::new(),
            children_facilities: 0,
            children_customers: 0,
            confirmed: 0,
        }
    }

    /// Serves a customer from the nearest known facility; returns its cost.
    fn add_customer(&mut self, p: Point) -> f64 {
        let cost = self
            .local_facilities
            .iter()
            .map(|f| f.distance(p))
            .fold(f64::INFINITY, f64::min);
        self.support_customers.push(p);
        self.total_cost += cost;
        cost
    }

    /// Opens a facility here: tells the parent, then splits into four children that
    /// take over the customers.
    fn partition(&mut self, cx: &mut Context<Self>) {
        if let Some(parent) = &self.parent {
            let _ = parent.tell(Facility {
                from: self.position,
                depth: self.depth,
                point: self.bounds.midpoint(),
                from_child: true,
            });
        }
        let customers: Arc<[Point]> = std::mem::take(&mut self.support_customers).into();
        let me = cx.myself();
        self.children = self
            .bounds
            .quarters()
            .into_iter()
            .enumerate()
            .map(|(position, bounds)| {
                let mut local_facilities = self.local_facilities.clone();
                local_facilities.push(bounds.midpoint());
                cx.spawn(Quadrant {
                    parent: Some(me.clone()),
                    report: None,
                    position,
                    bounds,
                    threshold: self.threshold,
                    depth: self.depth + 1,
                    local_facilities,
                    known_facilities: self.known_facilities,
                    max_depth_of_known_open_facility: self.max_depth_of_known_open_facility,
                    inherited: Some(customers.clone()),
                    support_customers: Vec::new(),
                    total_cost: 0.0,
                    children: Vec::new(),
                    children_facilities: 0,
                    children_customers: 0,
                    confirmed: 0,
                })
            })
            .collect();
    }

    fn safe_exit(&mut self, cx: &mut Context<Self>) {
        let open = usize::from(!self.children.is_empty());
        let customers = self.children_customers + self.support_customers.len();
        if let Some(parent) = &self.parent {
            let facilities = self.children_facilities + open;
            let _ = parent.tell(ConfirmExit {
                facilities,
                customers,
            });
        } else if let Some(report) = self.report.take() {
            let facilities = self.children_facilities + 1;
            let _ = report.send(Report {
                facilities,
                customers,
            });
        }
        cx.stop();
    }
}

impl Actor for Quadrant {
    fn started(&mut self, _: &mut Context<Self>) {
        if let Some(customers) = self.inherited.take() {
            let bounds = self.bounds;
            for &p in customers.iter().filter(|&&p| bounds.contains(p)) {
                self.add_customer(p);
            }
        }
    }
}

impl Handler<Customer> for Quadrant {
    fn handle(&mut self, c: Customer, cx: &mut Context<Self>) {
        // The root asks for the next customer once this one is placed.
        let producer = self.parent.is_none().then(|| c.producer.clone());
        if self.children.is_empty() {
            self.add_customer(c.point);
            if self.total_cost > self.threshold {
                self.partition(cx);
            }
        } else if let Some(child) = (self.bounds.quarters().iter())
            .position(|b| b.contains(c.point))
            .and_then(|i| self.children.get(i))
        {
            let _ = child.tell(c);
        }
        if let Some(producer) = producer {
            let _ = producer.tell(NextCustomer);
        }
    }
}

impl Handler<Facility> for Quadrant {
    fn handle(&mut self, f: Facility, _: &mut Context<Self>) {
        self.known_facilities += 1;
        self.local_facilities.push(f.point);
        if f.from_child {
            if let Some(parent) = &self.parent {
                let _ = parent.tell(Facility {
                    from: self.position,
                    ..f
                });
            }
            self.max_depth_of_known_open_facility =
                self.max_depth_of_known_open_facility.max(f.depth);
            if let Some(sibling) = self.children.get(opposite(f.from)) {
                let _ = sibling.tell(Facility {
                    from_child: false,
                    ..f
                });
            }
        } else {
            for child in &self.children {
                let _ = child.tell(Facility {
                    from_child: false,
                    ..f
                });
            }
        }
    }
}

impl Handler<RequestExit> for Quadrant {
    fn handle(&mut self, _: RequestExit, cx: &mut Context<Self>) {
        if self.children.is_empty() {
            self.safe_exit(cx);
        } else {
            for child in &self.children {
                let _ = child.tell(RequestExit);
            }
        }
    }
}

impl Handler<ConfirmExit> for Quadrant {
    fn handle(&mut self, c: ConfirmExit, cx: &mut Context<Self>) {
        self.children_facilities += c.facilities;
        self.children_customers += c.customers;
        self.confirmed += 1;
        if self.confirmed == self.children.len() {
            self.safe_exit(cx);
        }
    }
}

pub(crate) fn run(params: &Params) -> Outcome {
    let points: usize = params.get("n");
    let grid: f64 = params.get("g");
    let alpha: f64 = params.get("a");
    if points < 1 || !(grid > 0.0 && grid.is_finite()) || !(alpha > 0.0 && alpha.is_finite()) {
        let e = format!("need N >= 1, GRID_SIZE > 0, ALPHA > 0 (n={points}, g={grid}, a={alpha})");
        return Outcome::new(Default::default(), Err(e));
    }
    let threshold = alpha * std::f64::consts::SQRT_2 * grid;
    let mut stream = POINTS.lock().unwrap_or_else(PoisonError::into_inner);
    let rng = stream.take().unwrap_or_default();

    let start = Instant::now();
    let system = common::system(params);
    let (tx, rx) = mpsc::channel();
    let (rng_back, rng_rx) = mpsc::channel();
    let bounds = Bounds {
        x1: 0.0,
        y1: 0.0,
        x2: grid,
        y2: grid,
    };
    let root = system.spawn(Quadrant::new(bounds, threshold, tx));
    let producer = system.spawn(Producer {
        points,
        produced: 0,
        grid,
        rng: Some(rng),
        root: root.clone(),
        rng_back,
    });
    let (elapsed, report) = finish_exited(system, &rx, 1, start);
    drop((root, producer));
    // A failed run may not give the stream back: the next one starts it over.
    *stream = rng_rx.try_recv().ok();

    let check = report.and_then(|mut r| {
        let r = r.remove(0);
        if r.customers < points || r.facilities < 1 {
            return Err(format!(
                "{} customers, {} facilities: expected >= {points} and >= 1",
                r.customers, r.facilities
            ));
        }
        Ok(format!(
            "{} facilities, {} customers ({points} points)",
            r.facilities, r.customers
        ))
    });
    Outcome::new(elapsed, check)
}
