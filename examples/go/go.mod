module cvml.example/cvmlrun

go 1.19
