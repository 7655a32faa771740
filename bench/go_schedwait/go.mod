module go_schedwait

go 1.23
