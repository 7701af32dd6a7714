//! pglab's engine: the lab every experiment kind shares and the kinds themselves
//! (`experiment`), the finished runs' reports (`report`), the history of runs (`history`),
//! presets (`preset`) and the settings search (`tune`). It knows neither the terminal nor the
//! command line: neither crate is among its dependencies.

pub mod experiment;
pub mod fault;
pub mod history;
pub mod preset;
pub mod report;
pub mod tune;

// The module names the code uses for its neighbours (`crate::sql::…`), kept from when the
// layers were modules of one crate.
#[allow(unused_imports)]
use pglab_host as host;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_paths as paths;
#[allow(unused_imports)]
use pglab_paths::outputs;
#[allow(unused_imports)]
use pglab_server as server;
#[allow(unused_imports)]
use pglab_sql as sql;
